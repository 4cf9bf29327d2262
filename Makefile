# Makefile — builds the LOGOS tools, runs the checks, the demo, installs.
#   make            build every tool into build/bin
#   make check      install build deps (as root), build, run every test
#   make demo       install build deps (as root), build, run the example
#   make install    PREFIX=/usr/local DESTDIR= : tools and man pages

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
# libyaml, jansson, PCRE2 and utf8proc are linked statically so the tools run
# where none of them is installed.
LIBS     = -Wl,-Bstatic -lyaml -ljansson -lpcre2-8 -lutf8proc -Wl,-Bdynamic -ldl -lm -pthread
SANFLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

TOOLS   = logos-author logos-check logos-fuse logos-run logos-bench logos-import logos-tok
LIBSRC  = $(wildcard lib/*.c)
HDRS    = $(wildcard lib/*.h)
MAN     = $(wildcard man/man1/*.1 man/man5/*.5 man/man7/*.7)

UNIT    = $(wildcard tests/unit/*.c)
UNITBIN = $(UNIT:tests/unit/%.c=build/san/test/%)
# the unit tests of the reference's vector code built optimized too: the
# sanitized build keeps the plain loops, this one takes the AVX2 ones
OPTUNIT = build/test/test_ref build/test/test_quant
FUZZ    = $(filter-out tests/fuzz/replay.c,$(wildcard tests/fuzz/*.c))
FUZZBIN = $(FUZZ:tests/fuzz/%.c=build/san/fuzz/%)
BIN     = $(TOOLS:%=build/bin/%)
SANBIN  = $(TOOLS:%=build/san/bin/%)
KSRC    = $(wildcard kernels/*.cuh kernels/*.cu)
LIBOBJ  = $(LIBSRC:lib/%.c=build/obj/%.o) build/obj/kernels_src.o
SANOBJ  = $(LIBSRC:lib/%.c=build/san/obj/%.o) build/san/obj/kernels_src.o

all: $(BIN) build/test/gpu_kernels

# the CUDA sources, embedded so that logos-run stands alone
build/gen/kernels_src.c: $(KSRC) scripts/embed
	@mkdir -p $(@D)
	sh scripts/embed $(KSRC) > $@.tmp && mv $@.tmp $@

build/obj/kernels_src.o: build/gen/kernels_src.c
	$(CC) $(CFLAGS) -c $< -o $@

build/san/obj/kernels_src.o: build/gen/kernels_src.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

build/obj/%.o: lib/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -Ilib -c $< -o $@

build/san/obj/%.o: lib/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(SANFLAGS) -Ilib -c $< -o $@

build/bin/%: cmd/%/main.c $(LIBOBJ) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -Ilib $< $(LIBOBJ) -o $@ $(LIBS)

build/san/bin/%: cmd/%/main.c $(SANOBJ) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(SANFLAGS) -Ilib $< $(SANOBJ) -o $@ $(LIBS)

build/san/test/%: tests/unit/%.c $(SANOBJ) $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(SANFLAGS) -Ilib $< $(SANOBJ) -o $@ $(LIBS)

# the fuzz harnesses with replay.c's main instead of libFuzzer's (tests/run
# replays tests/fuzz/regress and a few seeds through them)
build/san/fuzz/%: tests/fuzz/%.c tests/fuzz/replay.c $(SANOBJ) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(SANFLAGS) -Ilib $< tests/fuzz/replay.c $(SANOBJ) -o $@ $(LIBS)

# the GPU's kernel tests (tests/gpu/run runs them where a GPU answers): not
# sanitized, since the CUDA driver and AddressSanitizer do not share a process
build/test/gpu_kernels: tests/gpu/kernels.c $(LIBOBJ) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -Ilib $< $(LIBOBJ) -o $@ $(LIBS)

build/test/test_%: tests/unit/test_%.c $(LIBOBJ) $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -Ilib $< $(LIBOBJ) -o $@ $(LIBS)

san: $(SANBIN) $(UNITBIN) $(FUZZBIN) $(OPTUNIT)

deps:
	@sh scripts/deps

check: deps
	@$(MAKE) --no-print-directory all san
	@sh tests/run

demo: deps
	@$(MAKE) --no-print-directory all
	@sh examples/demo.sh

install: all
	mkdir -p $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/man1/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/man5/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 man/man7/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/

clean:
	rm -rf build

.PHONY: all san deps check demo install clean
.SECONDARY: $(LIBOBJ) $(SANOBJ)
