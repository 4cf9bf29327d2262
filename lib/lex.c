/* lex.c — the tokens of a LOGOS program: names, numbers, punctuation,
 * comments and newlines (a statement ends at its line's end). */
#include <ctype.h>
#include <string.h>

#include "logos.h"

void lex_init(Lexer *lx, const Src *src)
{
    lx->src = src;
    lx->pos = 0;
    lx->line = 1;
    lx->col = 1;
}

static int peek(const Lexer *lx, size_t k)
{
    size_t i = lx->pos + k;
    return i < lx->src->len ? (unsigned char)lx->src->text[i] : 0;
}

static void advance(Lexer *lx, size_t n)
{
    while (n-- && lx->pos < lx->src->len) {
        if (lx->src->text[lx->pos] == '\n') {
            lx->line++;
            lx->col = 1;
        } else {
            lx->col++;
        }
        lx->pos++;
    }
}

static void skip_blanks(Lexer *lx)
{
    while (peek(lx, 0) == ' ' || peek(lx, 0) == '\t' || peek(lx, 0) == '\r')
        advance(lx, 1);
}

static Token make(Lexer *lx, int kind, size_t len)
{
    Token t = {kind, lx->line, lx->col, lx->src->text + lx->pos, (int)len};
    advance(lx, len);
    return t;
}

static size_t number_len(const Lexer *lx)
{
    size_t n = 0;
    while (isdigit(peek(lx, n)))
        n++;
    if (peek(lx, n) == '.' && isdigit(peek(lx, n + 1))) {
        n++;
        while (isdigit(peek(lx, n)))
            n++;
    }
    if (peek(lx, n) == 'e' || peek(lx, n) == 'E') {
        size_t m = n + 1;
        if (peek(lx, m) == '+' || peek(lx, m) == '-')
            m++;
        if (isdigit(peek(lx, m))) {
            while (isdigit(peek(lx, m)))
                m++;
            n = m;
        }
    }
    return n;
}

static int punct(int c, int next)
{
    switch (c) {
    case '=': return TK_EQ;
    case ':': return TK_COLON;
    case ',': return TK_COMMA;
    case '(': return TK_LP;
    case ')': return TK_RP;
    case '[': return TK_LB;
    case ']': return TK_RB;
    case '+': return TK_PLUS;
    case '-': return TK_MINUS;
    case '*': return TK_STAR;
    case '/': return TK_SLASH;
    case '@': return TK_AT;
    case '~': return TK_TILDE;
    case '.': return next == '.' ? TK_DOTDOT : TK_BAD;
    default: return TK_BAD;
    }
}

Token lex_next(Lexer *lx)
{
    skip_blanks(lx);
    int c = peek(lx, 0);
    if (lx->pos >= lx->src->len)
        return make(lx, TK_EOF, 0);
    if (c == '\n')
        return make(lx, TK_NL, 1);
    if (c == '#') {
        size_t n = 0;
        while (lx->pos + n < lx->src->len && peek(lx, n) != '\n')
            n++;
        return make(lx, TK_COMMENT, n);
    }
    if (isalpha(c) || c == '_') {
        size_t n = 1;
        while (isalnum(peek(lx, n)) || peek(lx, n) == '_')
            n++;
        return make(lx, TK_IDENT, n);
    }
    if (isdigit(c))
        return make(lx, TK_NUM, number_len(lx));
    int k = punct(c, peek(lx, 1));
    return make(lx, k, k == TK_DOTDOT ? 2 : 1);
}

Token lex_word(Lexer *lx)
{
    skip_blanks(lx);
    size_t n = 0;
    for (int c; (c = peek(lx, n)) && (isalnum(c) || c == '.' || c == '_' || c == '-');)
        n++;
    if (n == 0)
        return lex_next(lx);
    return make(lx, TK_WORD, n);
}

const char *tok_name(int kind)
{
    static const char *names[] = {
        [TK_EOF] = "end of input", [TK_NL] = "end of line", [TK_IDENT] = "a name",
        [TK_NUM] = "a number", [TK_COMMENT] = "a comment", [TK_EQ] = "'='",
        [TK_COLON] = "':'", [TK_COMMA] = "','", [TK_LP] = "'('", [TK_RP] = "')'",
        [TK_LB] = "'['", [TK_RB] = "']'", [TK_PLUS] = "'+'", [TK_MINUS] = "'-'",
        [TK_STAR] = "'*'", [TK_SLASH] = "'/'", [TK_AT] = "'@'", [TK_TILDE] = "'~'",
        [TK_DOTDOT] = "'..'", [TK_WORD] = "a word", [TK_BAD] = "a stray character",
    };
    return names[kind];
}
