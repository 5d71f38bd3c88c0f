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
MECHS = registry sync cp_async cp_async_mbarrier cg barrier pipeline primitives
SRC = arena diag ast reserved sema plan plan_host verify verify_host emit emit_kernel emit_test \
      output main $(MECHS:%=mech/%)
HDRS = src/pipegen.h src/mech/mech.h
OBJ = $(SRC:%=$(B)/obj/%.o) $(B)/obj/lexer.o $(B)/obj/parser.o
ASAN_OBJ = $(OBJ:$(B)/obj/%=$(B)/asan/%)
LIB_OBJ = $(filter-out %/main.o,$(OBJ))
ASAN_LIB_OBJ = $(filter-out %/main.o,$(ASAN_OBJ))

.PHONY: all demo check unit golden errors fuzz compile-test valgrind gpu-check bench \
        bench-report install clean samples mutation cli build-test fuzz-lib fuzz-long
.DELETE_ON_ERROR:

all: $(B)/pipegen $(B)/libpipert.a

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
CUDA_INC = -I$(CUDA_HOME)/include
# The device support generated code includes (pipert_device.cuh and one per mechanism),
# installed beside pipert.h and versioned with it.
DEVICE_HEADERS = $(wildcard runtime/*.cuh)
$(B)/rt/pipert.o: runtime/pipert.c runtime/pipert.h
	@mkdir -p $(B)/rt
	$(CC) $(CFLAGS) $(PG_WARN) -fPIC $(CUDA_INC) -c -o $@ $<
$(B)/libpipert.a: $(B)/rt/pipert.o
	ar rcs $@ $^

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
# -fsanitize=fuzzer,address,undefined: fuzz-lib runs it for FUZZ_TIME seconds (default 120)
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

valgrind: $(B)/pipegen
	@tests/valgrind.sh $(B)/pipegen

mutation: $(B)/asan/pipegen
	@tests/mutation/run.sh $(B)/asan/pipegen

cli: $(B)/pipegen
	@tests/cli/run.sh $(B)/pipegen

build-test:
	@tests/build/run.sh

# The suites of `make check`, in this order. Every suite runs even after an earlier one
# failed (a plain sub-make would stop there); the last line names the failed ones, and
# check then fails.
CHECK_SUITES = unit golden errors mutation cli fuzz fuzz-lib build-test compile-test valgrind
check: all
	@failed=; for suite in $(CHECK_SUITES); do \
	    $(MAKE) --no-print-directory $$suite || failed="$$failed $$suite"; \
	done; \
	if [ -n "$$failed" ]; then echo "make check: FAILED:$$failed"; exit 1; fi; \
	echo "make check: all suites passed"

# ---------------------------------------------------------------- GPU (device machine)
# GPU_SHARD=K/N: shard K of N of the matrix only; GPU_DRYRUN=1: list what would run (no
# GPU needed). bench-report: the report from every bench shard's rows (no GPU needed;
# BENCH_SHARDS: their directories, default build/bench/shard-*). tests/README.md.
gpu-check: $(B)/pipegen $(B)/libpipert.a
	@tests/gpu/run.sh $(B)/pipegen

bench: $(B)/pipegen $(B)/libpipert.a
	@tests/gpu/bench.sh $(B)/pipegen

bench-report:
	@tests/gpu/bench-report.sh $(BENCH_SHARDS)

# ---------------------------------------------------------------- install
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 755 $(B)/pipegen $(DESTDIR)$(PREFIX)/bin/pipegen
	install -m 644 $(B)/libpipert.a $(DESTDIR)$(PREFIX)/lib/libpipert.a
	install -m 644 runtime/pipert.h $(DEVICE_HEADERS) $(DESTDIR)$(PREFIX)/include/

clean:
	rm -rf $(B)
