#!/usr/bin/env bats
# tok.bats — logos-tok: text to ids and back with the tiny tokenizer of
# examples/tiny and the fixtures of tests/tok/fixture.py (standard-library
# Python): each option's output, decoding as a stream (a token's text is
# out before the next id is in; an unfinished UTF-8 sequence waits), the
# tokenizer logos-import brings along, and every rejected input with its
# exit status and message. Conformance with Hugging Face tokenizers is
# tests/tok/conform.py's, run by tests/run.

load common
bats_require_minimum_version 1.5.0

FIX="$TOP/tests/tok/fixture.py"
TINY="$TOP/examples/tiny"

setup() {
    cd "$BATS_TEST_TMPDIR" || exit 1
}

# reject STATUS MESSAGE: the last `run` exited STATUS with MESSAGE as the
# first line of stderr, and wrote nothing on stdout
reject() {
    [ "$status" -eq "$1" ] || { echo "status $status, expected $1: $stderr"; return 1; }
    [ "${stderr_lines[0]}" = "$2" ] || { echo "got:      ${stderr_lines[0]}"; echo "expected: $2"; return 1; }
    [ -z "$output" ] || { echo "stdout: $output"; return 1; }
}

# bad_json KIND MESSAGE: the broken tokenizer.json KIND is refused
bad_json() {
    python3 "$FIX" json "$1" "$1"
    run --separate-stderr logos-tok encode "$1" <<<"hi"
    reject 1 "$2"
}

bad_gguf() {
    python3 "$FIX" gguf "$1" "$1.gguf"
    run --separate-stderr logos-tok encode "$1.gguf" <<<"hi"
    reject 1 "$2"
}

@test "tok: -h prints the usage on stdout and exits 0" {
    run --separate-stderr logos-tok -h
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "usage: logos-tok encode "* ]]
    [ -z "$stderr" ]
}

@test "tok: usage errors exit 2 naming the problem" {
    run --separate-stderr logos-tok
    [ "$status" -eq 2 ] && [ "${stderr_lines[0]}" = "logos-tok: say encode or decode" ]
    run --separate-stderr logos-tok frob x
    [ "$status" -eq 2 ] && [ "${stderr_lines[0]}" = "logos-tok: say encode or decode, not 'frob'" ]
    run --separate-stderr logos-tok encode
    [ "$status" -eq 2 ] && [ "${stderr_lines[0]}" = "logos-tok: no tokenizer given: DIR is required" ]
    run --separate-stderr logos-tok encode -q "$TINY"
    [ "$status" -eq 2 ] && [ "$stderr" = "logos-tok: unknown option '-q' (try --help)" ]
    run --separate-stderr logos-tok decode --bare "$TINY"
    [ "$status" -eq 2 ] && [ "$stderr" = "logos-tok: --bare is for encode: decode has no template to leave out" ]
    run --separate-stderr logos-tok encode "$TINY" a b
    [ "$status" -eq 2 ] && [ "${stderr_lines[0]}" = "logos-tok: one input at a time" ]
}

@test "tok: --version prints the tool, its version and the language version, wherever it stands" {
    run --separate-stderr logos-tok --version
    [ "$status" -eq 0 ] && [ "$output" = "logos-tok 0.1.0 (LOGOS language 1)" ] && [ -z "$stderr" ]
    run --separate-stderr logos-tok encode "$TINY" --version
    [ "$status" -eq 0 ] && [ "$output" = "logos-tok 0.1.0 (LOGOS language 1)" ] && [ -z "$stderr" ]
    run --separate-stderr logos-tok --version=1
    [ "$status" -eq 2 ] && [ "$stderr" = "logos-tok: --version takes no value" ]
}

@test "tok: -h anywhere prints the usage on stdout, --version's line last" {
    run --separate-stderr logos-tok decode x -h
    [ "$status" -eq 0 ] && [ -z "$stderr" ]
    [[ "${lines[0]}" == "usage: logos-tok encode "* ]]
    [[ "${lines[-1]}" =~ ^\ \ --version\ +the\ tool\'s\ version\ and\ the\ LOGOS\ language\ version$ ]]
}

@test "tok: options after the operands (GNU order)" {
    printf 'a b' >t.txt
    run --separate-stderr logos-tok encode "$TINY" -o ids < <(printf 'a b')
    [ "$status" -eq 0 ] && [ -z "$output" ] && [ "$(cat ids)" = "1 117 23" ]
    run --separate-stderr logos-tok encode "$TINY" -v < <(printf 'a b')
    [ "$status" -eq 0 ] && [ "$output" = "$(printf '1\t<s>\n117\t▁a▁\n23\tb')" ]
    run --separate-stderr logos-tok encode "$TINY" t.txt --bare
    [ "$status" -eq 0 ] && [ "$output" = "117 23" ]
    run --separate-stderr logos-tok decode "$TINY" - -l < <(printf '1 123\n139 52\n')
    [ "$status" -eq 0 ] && [ "$output" = "$(printf 'The capital of \nFran')" ]
    run --separate-stderr logos-tok -l --bare encode "$TINY" < <(printf 'a b\n')
    [ "$status" -eq 0 ] && [ "$output" = "117 23" ]
}

@test "tok: bundled flags, an attached value, and -- ending the options" {
    run --separate-stderr logos-tok encode -lv "$TINY" < <(printf 'a b\n')
    [ "$status" -eq 0 ] && [ "$output" = "$(printf '1\t<s>\n117\t▁a▁\n23\tb\n')" ]
    run --separate-stderr logos-tok encode -lvoids "$TINY" < <(printf 'hi\n')
    [ "$status" -eq 0 ] && [ -z "$output" ] && [ "$(cat ids)" = "$(printf '1\t<s>\n48\t▁\n29\th\n30\ti\n')" ]
    run --separate-stderr logos-tok encode -oids2 "$TINY" < <(printf 'a b')
    [ "$status" -eq 0 ] && [ "$(cat ids2)" = "1 117 23" ]
    run --separate-stderr logos-tok encode -- "$TINY" < <(printf 'a b')
    [ "$status" -eq 0 ] && [ "$output" = "1 117 23" ]
    printf 'a b' >./-v
    run --separate-stderr logos-tok encode "$TINY" -- -v
    [ "$status" -eq 0 ] && [ "$output" = "1 117 23" ]
}

@test "tok: option errors are one line each, exit 2" {
    run --separate-stderr logos-tok encode -lZ "$TINY"
    [ "$status" -eq 2 ] && [ -z "$output" ] && [ "$stderr" = "logos-tok: unknown option '-Z' (try --help)" ]
    run --separate-stderr logos-tok encode "$TINY" --bogus
    [ "$status" -eq 2 ] && [ "$stderr" = "logos-tok: unknown option '--bogus' (try --help)" ]
    run --separate-stderr logos-tok encode "$TINY" -o
    [ "$status" -eq 2 ] && [ "$stderr" = "logos-tok: -o needs a value" ]
    run --separate-stderr logos-tok encode --special=yes "$TINY"
    [ "$status" -eq 2 ] && [ "$stderr" = "logos-tok: --special takes no value" ]
    run --separate-stderr logos-tok "$TINY" encode
    [ "$status" -eq 2 ] && [ "$stderr" = "logos-tok: say encode or decode, not '$TINY'" ]
}

@test "tok: encode: the whole input is one prompt, BOS first, one final newline dropped" {
    run --separate-stderr logos-tok encode "$TINY" <<<"The capital of France is"
    [ "$status" -eq 0 ] && [ "$output" = "1 123 139 52 24 49 30 40" ]
    printf 'The capital of France is' >t.txt
    run --separate-stderr logos-tok encode "$TINY" t.txt
    [ "$output" = "1 123 139 52 24 49 30 40" ]
}

@test "tok: encode -l: a line of ids per line of text; -z: texts ended by NUL" {
    run --separate-stderr logos-tok encode -l "$TINY" < <(printf 'a b\nThe cat\n\n')
    [ "$output" = "$(printf '1 117 23\n1 84 72 41\n1')" ]
    run --separate-stderr logos-tok encode -z --bare "$TINY" < <(printf 'a b\0The cat\0')
    [ "$output" = "$(printf '117 23\n84 72 41')" ]
}

@test "tok: special tokens written in the text are text unless --special" {
    run --separate-stderr logos-tok encode "$TINY" < <(printf '<s>hi')
    [ "$output" = "1 48 0 40 0 29 30" ]
    run --separate-stderr logos-tok encode --special "$TINY" < <(printf '<s>hi')
    [ "$output" = "1 1 48 29 30" ]
}

@test "tok: -v prints each id with its piece, escaped" {
    run --separate-stderr logos-tok encode --bare -v "$TINY" < <(printf 'hi')
    [ "$output" = "$(printf '48\t▁\n29\th\n30\ti')" ]
    logos-tok encode --bare -v -l "$TINY" < <(printf 'hi\na\n') >v
    [ "$(cat v)" = "$(printf '48\t▁\n29\th\n30\ti\n\n117\t▁a\n')" ] && [ "$(wc -l <v)" = 6 ]
    logos-tok encode --bare -v "$TINY" < <(printf 'hi') >v
    [ "$(wc -l <v)" = 3 ]
    python3 "$FIX" json bytes b
    run --separate-stderr logos-tok encode -v b < <(printf 'hi\t')
    [ "$output" = "$(printf '256\thi\n9\tĉ')" ]
    run --separate-stderr logos-tok decode -v "$TINY" <<<"1 123"
    [ "$output" = "$(printf '1\t<s>\n123\t▁The▁capital▁of▁')" ]
}

@test "tok: decode: ids as logos-run prints them back to text, special tokens skipped unless --special" {
    run --separate-stderr logos-tok decode "$TINY" < <(printf '1\n123\n139\n52\n')
    [ "$status" -eq 0 ] && [ "$output" = "The capital of Fran" ]
    run --separate-stderr logos-tok decode --special "$TINY" <<<"1 123 139 52"
    [ "$output" = "<s> The capital of Fran" ]
    run --separate-stderr logos-tok decode -l "$TINY" < <(printf '1 123\n139 52\n')
    [ "$output" = "$(printf 'The capital of \nFran')" ]
}

@test "tok: encode then decode gives the text back" {
    text="The quick brown fox jumps over the lazy dog, 42 times."
    run sh -c "echo '$text' | logos-tok encode '$TINY' | logos-tok decode '$TINY'"
    [ "$status" -eq 0 ] && [ "$output" = "$text" ]
}

@test "tok: decode writes bytes as UTF-8, an invalid sequence as U+FFFD, as tokenizers does" {
    python3 "$FIX" json bytes b
    run --separate-stderr logos-tok decode b <<<"195 169"
    [ "$output" = "é" ]
    run --separate-stderr logos-tok decode b <<<"195 65"
    [ "$output" = "�A" ]
    run --separate-stderr logos-tok decode b <<<"195"
    [ "$output" = "�" ]
    run --separate-stderr logos-tok decode --special b <<<"104 105 257"
    [ "$output" = "hi<|end|>" ]
}

@test "tok: decode writes each token's text as it arrives; a split character waits for its end" {
    python3 "$FIX" json bytes b
    mkfifo in out
    logos-tok decode b <in >out &
    exec 7>in 8<out
    echo 104 >&7
    [ "$(timeout 5 head -c 1 <&8)" = "h" ]
    echo 195 >&7
    echo 105 >&7
    [ "$(timeout 5 head -c 4 <&8)" = "�i" ]
    echo 226 >&7
    ! timeout 1 head -c 1 <&8 >early
    echo 130 >&7
    echo 172 >&7
    [ "$(timeout 5 head -c 3 <&8)" = "€" ]
    exec 7>&- 8<&-
    wait
    [ ! -s early ]
}

@test "tok: -o FILE is written whole, and not at all on bad input" {
    run --separate-stderr logos-tok encode -o ids "$TINY" <<<"a b"
    [ "$status" -eq 0 ] && [ "$(cat ids)" = "1 117 23" ]
    run --separate-stderr logos-tok decode -o text "$TINY" <<<"1 117 999"
    [ "$status" -eq 1 ] && [ ! -e text ] && [ -z "$(ls | grep tmp)" ]
}

@test "tok: a GGUF's tokenizer keys: SentencePiece merged by score, byte-level by merges" {
    python3 "$FIX" gguf llama l.gguf
    run --separate-stderr logos-tok encode l.gguf <<<"The capital"
    [ "$status" -eq 0 ] && [ "$output" = "1 119 62" ]
    run --separate-stderr logos-tok decode l.gguf <<<"1 119 62"
    [ "$output" = "The capital" ]
    python3 "$FIX" gguf gpt2 g.gguf
    run --separate-stderr logos-tok encode -v g.gguf < <(printf 'hi')
    [ "$output" = "$(printf '256\thi')" ]
}

@test "tok: logos-import brings the tokenizer along: tokenizer.json copied, a GGUF's keys extracted" {
    python3 "$TOP/tests/import/gen.py" st llama ck
    python3 "$FIX" json tiny ck
    run --separate-stderr logos-import -o out ck
    [ "$status" -eq 0 ]
    [ "${stderr_lines[1]}" = "logos-import: wrote out/tokenizer.json (BPE, 256 tokens)" ]
    cmp ck/tokenizer.json out/tokenizer.json
    run --separate-stderr logos-tok encode out <<<"a b"
    [ "$output" = "1 117 23" ]
    python3 "$FIX" gguf llama v.gguf
    python3 "$TOP/tests/import/gen.py" gguf qwen2 m.gguf --vocab v.gguf
    run --separate-stderr logos-import -o g m.gguf
    [ "${stderr_lines[1]}" = "logos-import: wrote g/tokenizer.gguf (SentencePiece BPE, 256 tokens)" ]
    run --separate-stderr logos-tok encode g <<<"The capital"
    [ "$output" = "1 119 62" ]
}

@test "tok: logos-import refuses a bad tokenizer before it writes anything" {
    python3 "$TOP/tests/import/gen.py" st qwen2 ck
    python3 "$FIX" json unigram ck
    run --separate-stderr logos-import -o out ck
    reject 1 "logos-import: ck/tokenizer.json: model type 'Unigram' is not read (logos-tok reads BPE)"
    [ ! -e out ]
}

@test "tok: an input that is not there" {
    run --separate-stderr logos-tok encode "$TINY" nothing.txt
    reject 1 "logos-tok: nothing.txt: cannot read: No such file or directory"
    run --separate-stderr logos-tok decode "$TINY" nothing.ids
    reject 1 "logos-tok: nothing.ids: cannot read: No such file or directory"
}

@test "tok: a tokenizer that is not there" {
    run --separate-stderr logos-tok encode nowhere <<<"hi"
    reject 1 "logos-tok: nowhere: cannot open: No such file or directory"
    mkdir empty
    run --separate-stderr logos-tok decode empty <<<"1"
    reject 1 "logos-tok: empty: no tokenizer here: neither tokenizer.json nor tokenizer.gguf"
}

@test "tok: bad tokenizer.json files are refused by name and place" {
    bad_json notjson "logos-tok: notjson/tokenizer.json:2:18: not JSON: unexpected token near ']'"
    bad_json unigram "logos-tok: unigram/tokenizer.json: model type 'Unigram' is not read (logos-tok reads BPE)"
    bad_json vocab "logos-tok: vocab/tokenizer.json: model.vocab is not an object of pieces and ids"
    bad_json merge-piece "logos-tok: merge-piece/tokenizer.json: model.merges[3]: '▁q' is not in the vocabulary"
    bad_json merge-result "logos-tok: merge-result/tokenizer.json: model.merges[0]: their piece 'e▁' is not in the vocabulary"
    bad_json twice "logos-tok: twice/tokenizer.json: model.vocab: id 5 is given to both '0' and '▁extra'"
    bad_json unk "logos-tok: unk/tokenizer.json: model.unk_token '<missing>' is not in the vocabulary"
    bad_json added-id "logos-tok: added-id/tokenizer.json: added_tokens[1].id is not a whole number from 0 to 16777215"
    bad_json template "logos-tok: template/tokenizer.json: the template's token 999 is not in the vocabulary (256 tokens)"
}

@test "tok: stages logos-tok does not implement are refused, not guessed at" {
    bad_json normalizer "logos-tok: normalizer/tokenizer.json: normalizer: type 'Lowercase' is not supported (known: NFC NFD NFKC NFKD Replace Prepend Sequence)"
    bad_json pre "logos-tok: pre/tokenizer.json: pre_tokenizer.pretokenizers[0]: type 'Whitespace' is not supported (known: Split ByteLevel Metaspace Sequence)"
    bad_json regex "logos-tok: regex/tokenizer.json: pre_tokenizer.pattern: the regex does not compile: missing closing parenthesis"
    bad_json behavior "logos-tok: behavior/tokenizer.json: pre_tokenizer.behavior is 'Sideways' (known: Removed Isolated MergedWithPrevious MergedWithNext Contiguous)"
    bad_json decoder "logos-tok: decoder/tokenizer.json: decoder: type 'WordPiece' is not supported (known: ByteLevel Replace ByteFallback Fuse Strip Metaspace Sequence)"
    bad_json strip "logos-tok: strip/tokenizer.json: decoder: Strip with stop 1 is not supported (only leading characters)"
    bad_json bytelevel-mixed "logos-tok: bytelevel-mixed/tokenizer.json: decoder.decoders[1]: ByteLevel with other decoders is not supported"
    bad_json post "logos-tok: post/tokenizer.json: post_processor: type 'BertProcessing' is not supported (known: TemplateProcessing ByteLevel Sequence)"
}

@test "tok: bad GGUF tokenizers are refused" {
    bad_gguf truncated "logos-tok: truncated.gguf: truncated at byte 1838: tokenizer.ggml.tokens runs past the end of the file"
    bad_gguf bert "logos-tok: bert.gguf: tokenizer.ggml.model 'bert' is not read (logos-tok reads gpt2 and llama)"
    bad_gguf pre "logos-tok: pre.gguf: tokenizer.ggml.pre 'mystery' is not known (known: default gpt2 llama-bpe qwen2 deepseek-v3 gpt-4o)"
    bad_gguf nomodel "logos-tok: nomodel.gguf: no tokenizer.ggml.model: the file carries no tokenizer"
    bad_gguf scores "logos-tok: scores.gguf: tokenizer.ggml.scores has 255 values for 256 tokens"
    bad_gguf bos "logos-tok: bos.gguf: tokenizer.ggml.bos_token_id 300 is past the vocabulary (256 tokens)"
    bad_gguf magic "logos-tok: magic.gguf: not a GGUF file: bad magic (expected 'GGUF')"
}

@test "tok: ids past the vocabulary and words that are not ids are refused where they stand" {
    run --separate-stderr logos-tok decode "$TINY" <<<"1 300"
    [ "$status" -eq 1 ] && [ "${stderr_lines[0]}" = "logos-tok: <stdin>:1:3: id 300 is past the vocabulary (256 tokens)" ]
    run --separate-stderr logos-tok decode "$TINY" < <(printf '1\n2\nx2\n')
    [ "$status" -eq 1 ] && [ "${stderr_lines[0]}" = "logos-tok: <stdin>:3:1: 'x2' is not a token id" ]
    run --separate-stderr logos-tok decode -l "$TINY" < <(printf '1 2\n 3 -4\n')
    [ "$status" -eq 1 ] && [ "${stderr_lines[0]}" = "logos-tok: <stdin>:2:4: '-4' is not a token id" ]
    run --separate-stderr logos-tok decode -v "$TINY" <<<"99999999999"
    [ "$status" -eq 1 ] && [ "${stderr_lines[0]}" = "logos-tok: <stdin>:1:1: '99999999999' is not a token id" ]
}

@test "tok: text that is not UTF-8 is refused, naming the byte, and nothing is encoded" {
    run --separate-stderr logos-tok encode -l "$TINY" < <(printf 'ok\nalso ok\nbad \xc3(\n')
    reject 1 "logos-tok: <stdin>:3:5: invalid UTF-8 (byte 0xC3): the text must be UTF-8"
    run --separate-stderr logos-tok encode "$TINY" < <(printf '\xed\xa0\x80')
    reject 1 "logos-tok: <stdin>:1:1: invalid UTF-8 (byte 0xED): the text must be UTF-8"
}

@test "tok: decode: a NUL byte is refused where it stands, and the input read no further" {
    run --separate-stderr logos-tok decode "$TINY" < <(printf '1 2\0 3')
    reject 1 "logos-tok: <stdin>:1:4: a NUL byte: this is not a text file"
    run --separate-stderr logos-tok decode -l "$TINY" < <(printf '1 123\n139\0')
    [ "$status" -eq 1 ] && [ "$output" = "The capital of " ]
    [ "$stderr" = "logos-tok: <stdin>:2:4: a NUL byte: this is not a text file" ]
    run --separate-stderr timeout 5 logos-tok decode "$TINY" /dev/zero
    reject 1 "logos-tok: /dev/zero:1:1: a NUL byte: this is not a text file"
    run --separate-stderr timeout 5 logos-tok decode -z "$TINY" /dev/zero
    reject 1 "logos-tok: /dev/zero:1:1: a NUL byte: this is not a text file"
    run --separate-stderr timeout 5 bash -c '{ printf "1 123\n1"; exec cat /dev/zero; } | logos-tok decode '"$TINY"
    [ "$status" -eq 1 ] && [ "$stderr" = "logos-tok: <stdin>:2:2: a NUL byte: this is not a text file" ]
}

@test "tok: encode: a NUL byte is refused but as -z's end, and an endless input is not read without end" {
    run --separate-stderr logos-tok encode "$TINY" < <(printf 'a\0b')
    reject 1 "logos-tok: <stdin>:1:2: a NUL byte: this is not a text file"
    run --separate-stderr logos-tok encode -l "$TINY" < <(printf 'ok\na\0b\n')
    reject 1 "logos-tok: <stdin>:2:2: a NUL byte: this is not a text file"
    run --separate-stderr timeout 5 logos-tok encode "$TINY" /dev/zero
    reject 1 "logos-tok: /dev/zero:1:1: a NUL byte: this is not a text file"
    run --separate-stderr timeout 60 logos-tok encode -z "$TINY" /dev/zero
    reject 1 "logos-tok: /dev/zero: larger than 256 MiB: too large for one input"
}

@test "decode: an id inside the vocabulary's range that has no piece (a gap) is named so" {
    mkdir gap
    python3 -c "import json, sys
j = json.load(open(sys.argv[1]))
v = j['model']['vocab']
v[next(k for k in v if v[k] == 5)] = 300
json.dump(j, open('gap/tokenizer.json', 'w'))" "$TINY/tokenizer.json"
    run --separate-stderr "$LOGOS_BIN/logos-tok" decode gap <<<"5"
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-tok: <stdin>:1:1: id 5 is not in the vocabulary (it has no piece)" ]
    run --separate-stderr "$LOGOS_BIN/logos-tok" decode gap <<<"301"
    [ "$status" -eq 1 ]
    [ "$stderr" = "logos-tok: <stdin>:1:1: id 301 is past the vocabulary (301 tokens)" ]
}
