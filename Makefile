# pipegen build. `make demo` and `make check` are the quick start (README.md).
#
# Build outputs go to build/ (the normal build) and build/asan/ (ASan+UBSan build used by
# the tests). Generated CUDA for the samples goes to build/samples/.

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
BISON    ?= bison
FLEX     ?= flex
NVCC     ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CFLAGS   ?= -O2 -g
PG_WARN   = -std=c11 -Wall -Wextra -Werror
PG_CPPFLAGS = -D_POSIX_C_SOURCE=200809L -Isrc -I$(B)/gen
# flex and bison output is not ours to clean up; compile it without -Wextra noise.
GEN_WARN  = -std=c11 -Wall -Werror -Wno-unused-function -Wno-sign-compare
SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

B = build
# The phases (src/), then the mechanism modules (src/mech/: the registry and one file per
# lowering, sharing src/mech/mech.h).
MECHS = $(sort $(patsubst src/mech/%.c,%,$(wildcard src/mech/*.c)))
SRC = arena diag arch ast reserved sema spec plan plan_host verify verify_host lint wisdom emit_text emit emit_kernel emit_test \
      output main $(MECHS:%=mech/%)
HDRS = src/pipegen.h src/mech/mech.h src/mech/lowerings.h
OBJ = $(SRC:%=$(B)/obj/%.o) $(B)/obj/lexer.o $(B)/obj/parser.o
ASAN_OBJ = $(OBJ:$(B)/obj/%=$(B)/asan/%)
LIB_OBJ = $(filter-out %/main.o,$(OBJ))
ASAN_LIB_OBJ = $(filter-out %/main.o,$(ASAN_OBJ))

.PHONY: all demo check unit golden errors fuzz compile-test compile-cuda12 valgrind gpu-check gpu-runtime bench \
        bench-report tune install uninstall clean samples mutation cli build-test fuzz-lib fuzz-long \
        runtime-test install-test
.DELETE_ON_ERROR:

# all: pipegen, libpipert (static and shared) and the packaging files (below, once
# they are defined).
all:

# What a rule needs is checked (or installed) by its recipe, so that only what is built
# asks for it: flex, bison and cc for the compiler, also pkg-config and Check for the
# unit tests (scripts/ensure-deps.sh).

# One bison run writes parser.c and parser.h, one flex run lexer.c and lexer.h: grouped
# targets (&:), so that make -j runs each once rather than once per output.
ifeq ($(filter grouped-target,$(.FEATURES)),)
$(error pipegen's Makefile needs GNU make 4.3 or newer (grouped targets); this is $(MAKE_VERSION))
endif
$(B)/gen/parser.c $(B)/gen/parser.h &: grammar/parser.y
	@scripts/ensure-deps.sh build
	@mkdir -p $(B)/gen
	$(BISON) -Wall -Werror --defines=$(B)/gen/parser.h -o $(B)/gen/parser.c $<

$(B)/gen/lexer.c $(B)/gen/lexer.h &: grammar/lexer.l $(B)/gen/parser.h
	@mkdir -p $(B)/gen
	$(FLEX) --header-file=$(B)/gen/lexer.h -o $(B)/gen/lexer.c $<

$(B)/obj/%.o: src/%.c $(HDRS) $(B)/gen/parser.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PG_WARN) $(PG_CPPFLAGS) -c -o $@ $<
$(B)/obj/%.o: $(B)/gen/%.c src/pipegen.h $(B)/gen/parser.h $(B)/gen/lexer.h
	@mkdir -p $(B)/obj
	$(CC) $(CFLAGS) $(GEN_WARN) $(PG_CPPFLAGS) -c -o $@ $<
$(B)/asan/%.o: src/%.c $(HDRS) $(B)/gen/parser.h
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) $(PG_WARN) $(PG_CPPFLAGS) -c -o $@ $<
$(B)/asan/%.o: $(B)/gen/%.c src/pipegen.h $(B)/gen/parser.h $(B)/gen/lexer.h
	@mkdir -p $(B)/asan
	$(CC) $(SAN_FLAGS) $(GEN_WARN) $(PG_CPPFLAGS) -c -o $@ $<

$(B)/pipegen: $(OBJ)
	$(CC) $(CFLAGS) -o $@ $^
$(B)/asan/pipegen: $(ASAN_OBJ)
	$(CC) $(SAN_FLAGS) -o $@ $^

# ---------------------------------------------------------------- runtime (libpipert)
# libpipert is versioned with pipegen (src/pipegen.h): libpipert.so.MAJOR.MINOR.PATCH, soname
# libpipert.so.MAJOR, and the libpipert.so link; built with -fvisibility=hidden, so that only
# what pipert.h declares PIPERT_API is exported.
VERSION := $(shell sed -n 's/^\#define PIPEGEN_VERSION "\([^"]*\)".*/\1/p' src/pipegen.h)
MAJOR := $(firstword $(subst ., ,$(VERSION)))
CUDA_INC = -I$(CUDA_HOME)/include
CUDA_LIBDIR ?= $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/targets/x86_64-linux/lib) \
                           $(CUDA_HOME)/lib64)
# The device support generated code includes (pipert_device.cuh and one per mechanism),
# installed beside pipert.h and versioned with it.
DEVICE_HEADERS = $(wildcard runtime/*.cuh)
RT_SRC = pipert pipert_stream
RT_OBJ = $(RT_SRC:%=$(B)/rt/%.o)
RT_CFLAGS = -fvisibility=hidden -DPIPERT_VERSION_STRING='"$(VERSION)"'
SONAME = libpipert.so.$(MAJOR)
$(B)/rt/%.o: runtime/%.c runtime/pipert.h src/pipegen.h
	@mkdir -p $(B)/rt
	$(CC) $(CFLAGS) $(PG_WARN) -fPIC $(RT_CFLAGS) $(CUDA_INC) -c -o $@ $<
$(B)/libpipert.a: $(RT_OBJ)
	rm -f $@
	ar rcs $@ $^
$(B)/libpipert.so.$(VERSION): $(RT_OBJ)
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -o $@ $^ \
	    -L$(CUDA_LIBDIR) -lcudart
$(B)/$(SONAME): $(B)/libpipert.so.$(VERSION)
	ln -sf libpipert.so.$(VERSION) $@
$(B)/libpipert.so: $(B)/$(SONAME)
	ln -sf $(SONAME) $@
LIBPIPERT = $(B)/libpipert.a $(B)/libpipert.so.$(VERSION) $(B)/$(SONAME) $(B)/libpipert.so

# ---------------------------------------------------------------- packaging
# The man page is printed from pipegen --help (scripts/man.sh); pipert.pc and the CMake
# package files are filled in from packaging/*.in.
PKG_SUBST = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@MAJOR@|$(MAJOR)|g' \
                -e 's|@CUDA_HOME@|$(CUDA_HOME)|g' -e 's|@CUDA_LIBDIR@|$(CUDA_LIBDIR)|g'
PKG_FILES = $(B)/pkg/pipegen.1 $(B)/pkg/pipert.pc $(B)/pkg/pipegenConfig.cmake \
            $(B)/pkg/pipegenConfigVersion.cmake
$(B)/pkg/pipegen.1: $(B)/pipegen scripts/man.sh
	@mkdir -p $(B)/pkg
	scripts/man.sh $(B)/pipegen >$@
$(B)/pkg/%: packaging/%.in src/pipegen.h
	@mkdir -p $(B)/pkg
	$(PKG_SUBST) $< >$@

all: $(B)/pipegen $(LIBPIPERT) $(PKG_FILES)

# ---------------------------------------------------------------- samples and demo
SAMPLES = $(notdir $(wildcard samples/*))
samples: $(B)/pipegen $(B)/libpipert.a
	@scripts/build-samples.sh

demo: all
	@scripts/demo.sh

# ---------------------------------------------------------------- tests (no GPU)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
UNIT = $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))

# Every test binary links the shared harness (tests/unit/harness.h).
$(B)/asan/unit/harness.o: tests/unit/harness.c tests/unit/harness.h $(HDRS) $(B)/gen/parser.h
	@scripts/ensure-deps.sh test
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) $(PG_WARN) $(PG_CPPFLAGS) $(CHECK_CFLAGS) -c -o $@ $<
$(B)/asan/unit/%: tests/unit/%.c tests/unit/harness.h $(B)/asan/unit/harness.o $(ASAN_LIB_OBJ)
	@scripts/ensure-deps.sh test
	@mkdir -p $(B)/asan/unit
	$(CC) $(SAN_FLAGS) $(PG_WARN) $(PG_CPPFLAGS) $(CHECK_CFLAGS) -o $@ $(filter-out %.h,$^) $(CHECK_LIBS)

unit: $(UNIT:%=$(B)/asan/unit/%)
	@scripts/run-unit.sh $^

golden: $(B)/asan/pipegen
	@tests/golden/run.sh $(B)/asan/pipegen

errors: $(B)/asan/pipegen
	@tests/errors/run.sh $(B)/asan/pipegen

fuzz: $(B)/asan/pipegen
	@tests/fuzz/run.sh $(B)/asan/pipegen

# libFuzzer over the compiler in memory (tests/fuzz/libfuzzer.c), built with clang
# -fsanitize=fuzzer,address,undefined: fuzz-lib runs it for FUZZ_TIME seconds (default 15)
# from the seed corpus, fuzz-long for hours (FUZZ_TIME, default 4 h) from a corpus kept in
# $(B)/fuzz/corpus. Without clang's fuzzer runtime the script says SKIPPED and how to
# install it; it builds the harness itself (only then is clang needed).
FUZZ_CC ?= clang
FUZZ_FLAGS = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_LIB_OBJ = $(LIB_OBJ:$(B)/obj/%=$(B)/fuzz/%)
$(B)/fuzz/%.o: src/%.c $(HDRS) $(B)/gen/parser.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(PG_WARN) $(PG_CPPFLAGS) -c -o $@ $<
$(B)/fuzz/%.o: $(B)/gen/%.c src/pipegen.h $(B)/gen/parser.h $(B)/gen/lexer.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(GEN_WARN) $(PG_CPPFLAGS) -c -o $@ $<
$(B)/fuzz/fuzz-pipegen: tests/fuzz/libfuzzer.c $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $(PG_WARN) $(PG_CPPFLAGS) -o $@ $^

fuzz-lib:
	@FUZZ_CC=$(FUZZ_CC) tests/fuzz/libfuzzer.sh $(B)/fuzz/fuzz-pipegen

fuzz-long:
	@FUZZ_CC=$(FUZZ_CC) FUZZ_TIME=$${FUZZ_TIME:-14400} FUZZ_CORPUS=$${FUZZ_CORPUS:-$(B)/fuzz/corpus} \
	    tests/fuzz/libfuzzer.sh $(B)/fuzz/fuzz-pipegen

compile-test: $(B)/pipegen
	@tests/compile/run.sh $(B)/pipegen

# The compile suite's subset with a CUDA 12.x nvcc (CUDA12_NVCC, or /usr/local/cuda-12.*),
# or, while the generated code takes only a newer CUDA, its version guard; skipped without.
compile-cuda12: $(B)/pipegen
	@tests/compile/cuda12.sh $(B)/pipegen

valgrind: $(B)/pipegen
	@tests/valgrind.sh $(B)/pipegen

mutation: $(B)/asan/pipegen
	@tests/mutation/run.sh $(B)/asan/pipegen

cli: $(B)/pipegen
	@tests/cli/run.sh $(B)/pipegen

build-test:
	@tests/build/run.sh

# The runtime's CPU-side logic, linked against a fake CUDA runtime instead of libcudart.
RT_ASAN_OBJ = $(RT_SRC:%=$(B)/asan/rt/%.o)
$(B)/asan/rt/%.o: runtime/%.c runtime/pipert.h src/pipegen.h
	@mkdir -p $(B)/asan/rt
	$(CC) $(SAN_FLAGS) $(PG_WARN) $(RT_CFLAGS) $(CUDA_INC) -c -o $@ $<
$(B)/asan/rt/test_pipert: tests/runtime/test_pipert.c tests/runtime/fake_cudart.c \
                          tests/runtime/fake_cudart.h $(RT_ASAN_OBJ)
	@scripts/ensure-deps.sh test
	$(CC) $(SAN_FLAGS) $(PG_WARN) -D_POSIX_C_SOURCE=200809L -DPG_EXPECT_VERSION='"$(VERSION)"' \
	    -Iruntime -Itests/runtime $(CUDA_INC) $(CHECK_CFLAGS) -o $@ \
	    $(filter %.c %.o,$^) $(CHECK_LIBS)

runtime-test: $(B)/asan/rt/test_pipert
	@tests/runtime/run.sh $<

# make install into a temporary DESTDIR, the example built against it with make and with
# CMake, and make uninstall.
install-test: all
	@tests/install/run.sh

# The suites of `make check`, in this order. Every suite runs even after an earlier one
# failed (a plain sub-make would stop there); the last line names the failed ones, and
# check then fails.
CHECK_SUITES = unit golden errors mutation cli fuzz fuzz-lib build-test compile-test \
               compile-cuda12 valgrind runtime-test install-test
check: all
	@failed=; times=; for suite in $(CHECK_SUITES); do \
	    start=$$(date +%s); \
	    $(MAKE) --no-print-directory $$suite || failed="$$failed $$suite"; \
	    times="$$times $$suite $$(( $$(date +%s) - start ))s"; \
	done; \
	echo "make check: seconds per suite:$$times"; \
	if [ -n "$$failed" ]; then echo "make check: FAILED:$$failed"; exit 1; fi; \
	echo "make check: all suites passed"

# ---------------------------------------------------------------- GPU (device machine)
# GPU_SHARD=K/N: shard K of N of the matrix only; GPU_DRYRUN=1: list what would run (no
# GPU needed). bench-report: the report from every bench shard's rows (no GPU needed;
# BENCH_SHARDS: their directories, default build/bench/shard-*). tests/README.md.
gpu-check: $(B)/pipegen $(B)/libpipert.a
	@tests/gpu/run.sh $(B)/pipegen

# The runtime's own GPU tests alone (cudaDeviceReset, racing first callers); gpu-check
# runs them in one of its shards.
gpu-runtime: $(B)/pipegen $(B)/libpipert.a
	@tests/gpu/runtime.sh $(B)/pipegen

bench: $(B)/pipegen $(B)/libpipert.a
	@tests/gpu/bench.sh $(B)/pipegen

bench-report:
	@tests/gpu/bench-report.sh $(BENCH_SHARDS)

# A tuning run of every spec the matrix benches under auto, into build/tune/pipegen.wisdom
# (GPU_SHARD=K/N: a shard of the specs); then make bench BENCH_WISDOM=that file.
tune: $(B)/pipegen $(B)/libpipert.a
	@tests/gpu/wisdom.sh $(B)/pipegen

# ---------------------------------------------------------------- install
# PREFIX/bin/pipegen, PREFIX/lib/libpipert.{a,so*}, PREFIX/include/pipegen/pipert.h and the
# device headers beside it, PREFIX/lib/pkgconfig/pipert.pc, PREFIX/lib/cmake/pipegen/,
# PREFIX/share/man/man1/pipegen.1, and PREFIX/share/pipegen/install_manifest.txt: every
# file install put there, relative to PREFIX (an earlier install's too, as CMake's
# install_manifest.txt). DESTDIR is honoured. `make uninstall` removes exactly the files
# the manifest names, and pipegen's own directories once empty.
BINDIR   = $(PREFIX)/bin
LIBDIR   = $(PREFIX)/lib
INCDIR   = $(PREFIX)/include/pipegen
PCDIR    = $(LIBDIR)/pkgconfig
CMAKEDIR = $(LIBDIR)/cmake/pipegen
MAN1DIR  = $(PREFIX)/share/man/man1
SHAREDIR = $(PREFIX)/share/pipegen
MANIFEST = $(SHAREDIR)/install_manifest.txt
INSTALLED = $(BINDIR)/pipegen $(BINDIR)/pipegen-tune $(LIBDIR)/libpipert.a $(LIBDIR)/libpipert.so.$(VERSION) \
            $(LIBDIR)/$(SONAME) $(LIBDIR)/libpipert.so $(INCDIR)/pipert.h \
            $(DEVICE_HEADERS:runtime/%=$(INCDIR)/%) $(PCDIR)/pipert.pc \
            $(CMAKEDIR)/pipegenConfig.cmake $(CMAKEDIR)/pipegenConfigVersion.cmake \
            $(CMAKEDIR)/pipegenGenerate.cmake $(MAN1DIR)/pipegen.1 $(MANIFEST)
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(PCDIR) \
	    $(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(SHAREDIR)
	install -m 755 $(B)/pipegen $(DESTDIR)$(BINDIR)/pipegen
	install -m 755 tools/pipegen-tune $(DESTDIR)$(BINDIR)/pipegen-tune
	install -m 644 $(B)/libpipert.a $(DESTDIR)$(LIBDIR)/libpipert.a
	install -m 755 $(B)/libpipert.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libpipert.so.$(VERSION)
	ln -sf libpipert.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libpipert.so
	install -m 644 runtime/pipert.h $(DEVICE_HEADERS) $(DESTDIR)$(INCDIR)/
	install -m 644 $(B)/pkg/pipert.pc $(DESTDIR)$(PCDIR)/pipert.pc
	install -m 644 $(B)/pkg/pipegenConfig.cmake $(B)/pkg/pipegenConfigVersion.cmake \
	    packaging/pipegenGenerate.cmake $(DESTDIR)$(CMAKEDIR)/
	install -m 644 $(B)/pkg/pipegen.1 $(DESTDIR)$(MAN1DIR)/pipegen.1
	@{ [ ! -f $(DESTDIR)$(MANIFEST) ] || cat $(DESTDIR)$(MANIFEST); \
	   printf '%s\n' $(INSTALLED:$(PREFIX)/%=%); } | LC_ALL=C sort -u >$(B)/install_manifest.txt
	install -m 644 $(B)/install_manifest.txt $(DESTDIR)$(MANIFEST)
	@echo "install: $$(wc -l <$(B)/install_manifest.txt) files under $(DESTDIR)$(PREFIX), listed in $(DESTDIR)$(MANIFEST)"

uninstall:
	@if [ ! -f $(DESTDIR)$(MANIFEST) ]; then \
	    echo "uninstall: no $(DESTDIR)$(MANIFEST): nothing installed there to remove"; exit 0; fi; \
	n=0; while IFS= read -r f; do \
	    case $$f in ''|/*|*..*) echo "uninstall: skipping '$$f' of the manifest" >&2; continue;; esac; \
	    if [ -e "$(DESTDIR)$(PREFIX)/$$f" ] || [ -L "$(DESTDIR)$(PREFIX)/$$f" ]; then \
	        rm -f "$(DESTDIR)$(PREFIX)/$$f" && n=$$((n + 1)) || exit 1; fi; \
	done <$(DESTDIR)$(MANIFEST); \
	echo "uninstall: removed $$n files under $(DESTDIR)$(PREFIX)"
	-@rmdir $(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(SHAREDIR) 2>/dev/null || true

clean:
	rm -rf $(B)
