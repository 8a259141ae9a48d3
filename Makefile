# tracepp — one Makefile for everything. `make check` and `make demo` are the
# two entry points; both install missing Debian packages first (`make deps`).

# Debian's programs before per-user shims in PATH (pyenv's python3 shim
# takes ~2 s per start): everything here runs what `make deps` installed.
export PATH := /usr/sbin:/usr/bin:/sbin:/bin:$(PATH)
CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
B        ?= build
# libcbor: only the unit tests that hold the reader's own CBOR decoders to it
# use it (the linker drops it from the rest).
PKGS     := libcbor liblz4 libdw libelf libtraceevent
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

# Debian packages: to build, to run the tests, to plot, and the peers used by `make bench`.
DEB_BUILD := gcc g++ make binutils pkg-config libcbor-dev liblz4-dev libdw-dev libelf-dev libbz2-dev libtraceevent-dev
DEB_RUN   := gnuplot-nox
DEB_TEST  := clang libclang-rt-14-dev uftrace linux-perf python3 iproute2 util-linux e2fsprogs strace bpftrace chromium \
             man-db groff-base nodejs clickhouse-server clickhouse-client curl
# front-end consumers the tests load exports into (speedscope, driven in
# Debian's chromium by playwright-core; DuckDB's engine, @duckdb/node-api, a
# prebuilt library that needs no install script), pinned by
# tests/tools/package-lock.json. clickhouse-server: the two-shard cluster
# tests/t-fleet.sh starts (fleet/)
NPM_TOOLS := tests/tools
DEB_BENCH := trace-cmd linux-perf hyperfine lttng-tools babeltrace2 bpftrace valgrind

ifeq ($(SAN),1)
  B := build-san
  EXTRA_CFLAGS += $(SAN_FLAGS)
  EXTRA_LDFLAGS += $(SAN_FLAGS)
endif

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Iformat -Idecoders -Irecorder $(EXTRA_CFLAGS)
# The one version of both programs and of the files they write: VERSION.
TPP_VERSION := $(shell cat VERSION)
CFLAGS   += -DTPP_VERSION='"$(TPP_VERSION)"'

# tracepp's rooms: each compiles with the include path postproc/README.md
# allows it, so a header of another room is not found
# (tests/layers.py checks the rest: no include by path, no import loop).
ROOM_INC_util     := -Iutil
# the libraries under tracepp: decoders/ builds on util/, format/ on libc;
# the recorder sees none of tracepp's rooms (its headers are no concern of it)
ROOM_INC_decoders := -Iutil
ROOM_INC_format   :=
ROOM_INC_recorder :=
ROOM_INC_analysis := -Ipostproc/analysis -Iutil
ROOM_INC_out      := -Ipostproc/out -Iutil
ROOM_INC_script   := -Ipostproc/script -Ipostproc/out -Iutil
ROOM_INC_plot     := -Iplot -Iutil
ROOM_INC_cmd      := -Ipostproc/cmd -Ipostproc/analysis -Ipostproc/out -Ipostproc/script -Iplot -Iutil
ROOM_INC_postproc := -Ipostproc/cmd
# unit tests and benchmarks reach into any room they test
ROOM_INC_all      := -Ipostproc -Ipostproc/cmd -Ipostproc/analysis -Ipostproc/out -Ipostproc/script -Iplot -Iutil
ROOM_INC = $(ROOM_INC_all)
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LDLIBS   += $(PKG_LIBS) -lpthread -lm
# tracepp is linked statically, libc included, and position-independent (a
# reader of untrusted files keeps its address randomisation). Loading shared
# libraries cost 0.5 ms of every run here, ld.so's relocations and six
# libraries: a sixteenth of `latency --sched` on the bench's file. A static
# tracepp also analyses a file on a host that lacks them. The sanitizers
# need a shared libc: there, only the other libraries are static. libdw's
# debuginfod client cannot be loaded (the one link warning, silenced): a
# file carries the symbols its analysis needs.
TPP_STATIC := $(filter-out -pthread -lpthread,$(shell pkg-config --static --libs liblz4 libdw 2>/dev/null))
# C++ names are demangled by the C++ ABI's own demangler, from libsupc++.a
# (g++'s runtime support library, part of the g++ package).
ifeq ($(SAN),1)
  TPP_LIBS := -Wl,-Bstatic $(TPP_STATIC) -lsupc++ -Wl,-Bdynamic -lpthread -lm
else
  TPP_LIBS := -static-pie -Wl,--no-warnings $(TPP_STATIC) -lsupc++ -lpthread -lm
endif
LDFLAGS  += $(EXTRA_LDFLAGS)

FORMAT_SRC  := $(wildcard format/*.c)
DECODE_SRC  := $(wildcard decoders/*.c)
ANALYSIS_SRC:= $(wildcard postproc/analysis/*.c)
UTIL_SRC    := $(wildcard util/*.c)
POSTPROC_SRC:= $(filter-out $(ANALYSIS_SRC),$(wildcard postproc/*.c postproc/*/*.c plot/*.c))
REC_SRC     := $(wildcard recorder/*.c)
RT_SRC      := $(wildcard recorder/rt/*.c)
BENCH_SRC   := $(wildcard bench/*.c)
UNIT_SRC    := $(wildcard tests/unit/*.c)
SAMPLE_SRC  := $(wildcard samples/src/*.c)
SAMPLE_CXX  := $(wildcard samples/src/*.cc)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))
LIBFORMAT := $(B)/libtppformat.a
LIBDECODE := $(B)/libtppdecode.a
LIBANALYZE:= $(B)/libtppanalyze.a
LIBUTIL   := $(B)/libtpputil.a
TRACEPP   := $(B)/tracepp
TRACEREC  := $(B)/tracerec
LIBRT     := $(B)/libtpprt.so
BENCH_BIN := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))
UNIT_BIN  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
ORACLE_C  := $(wildcard tests/oracle/src/s-*.c tests/oracle/src/a-*.c)
ORACLE_CXX:= $(wildcard tests/oracle/src/s-*.cc)
ORACLE_V  := pg-O0 pg-O2 fi-O0 fi-O2
ORACLE    := $(foreach s,$(notdir $(basename $(ORACLE_C) $(ORACLE_CXX))),$(foreach v,$(ORACLE_V),$(B)/oracle/$(s)-$(v))) \
             $(foreach v,$(ORACLE_V),$(B)/oracle/libplugin-$(v).so)
SAMPLES   := $(foreach s,$(patsubst samples/src/%.c,%,$(SAMPLE_SRC)),$(B)/samples/$(s) $(B)/samples/$(s)-pg $(B)/samples/$(s)-fi) \
             $(foreach s,$(patsubst samples/src/%.cc,%,$(SAMPLE_CXX)),$(B)/samples/$(s) $(B)/samples/$(s)-pg $(B)/samples/$(s)-fi)

.PHONY: all deps check check-fast check-layers check-san bench demo fuzz install uninstall clean samples oracle man
# The recorder and runtime are built once their sources exist. The oracle
# programs are only recorded by the plain build's tests.
all: $(TRACEPP) $(if $(REC_SRC),$(TRACEREC)) $(if $(RT_SRC),$(LIBRT)) $(BENCH_BIN) $(UNIT_BIN) samples \
     $(if $(filter 1,$(SAN)),,oracle man)

# The man pages, made from the built programs' own --help (man/mkman.sh):
# tracepp(1), tracerec(1) and one per subcommand.
MAN_STAMP := $(B)/man/.made
man: $(MAN_STAMP)
$(MAN_STAMP): $(TRACEPP) $(TRACEREC) man/mkman.sh
	@rm -rf $(B)/man && sh man/mkman.sh $(B) $(B)/man && touch $@

samples: $(SAMPLES)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ROOM_INC) $(PKG_CFLAGS) -MMD -MP -c -o $@ $<
$(B)/obj/util/%.o: ROOM_INC = $(ROOM_INC_util)
$(B)/obj/decoders/%.o: ROOM_INC = $(ROOM_INC_decoders)
$(B)/obj/format/%.o: ROOM_INC = $(ROOM_INC_format)
$(B)/obj/recorder/%.o: ROOM_INC = $(ROOM_INC_recorder)
$(B)/obj/postproc/analysis/%.o: ROOM_INC = $(ROOM_INC_analysis)
$(B)/obj/postproc/out/%.o: ROOM_INC = $(ROOM_INC_out)
$(B)/obj/postproc/script/%.o: ROOM_INC = $(ROOM_INC_script)
$(B)/obj/postproc/cmd/%.o: ROOM_INC = $(ROOM_INC_cmd)
$(B)/obj/plot/%.o: ROOM_INC = $(ROOM_INC_plot)
$(B)/obj/postproc/tracepp.o: ROOM_INC = $(ROOM_INC_postproc)

$(LIBFORMAT): $(call obj,$(FORMAT_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(LIBDECODE): $(call obj,$(DECODE_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
# the analyses, a library: tracepp's commands and unit tests link it
$(LIBANALYZE): $(call obj,$(ANALYSIS_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(LIBUTIL): $(call obj,$(UTIL_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^

$(TRACEPP): $(call obj,$(POSTPROC_SRC)) $(B)/obj/gen/syscall_names.o $(LIBANALYZE) $(LIBDECODE) $(LIBUTIL) $(LIBFORMAT)
	$(CC) $(LDFLAGS) -o $@ $^ $(TPP_LIBS)

# x86-64 syscall names for dump and replay (postproc/out/fieldfmt.c), from
# the kernel's own list in linux-libc-dev's <asm/unistd_64.h>; an empty
# table where the header is not found, and the numbers print as numbers.
SYSCALL_HDR := $(firstword $(wildcard /usr/include/x86_64-linux-gnu/asm/unistd_64.h /usr/include/asm/unistd_64.h))
$(B)/gen/syscall_names.c: $(SYSCALL_HDR) postproc/out/gen-syscalls.sh
	@mkdir -p $(dir $@)
	sh postproc/out/gen-syscalls.sh $(SYSCALL_HDR) >$@.tmp && mv $@.tmp $@
$(B)/obj/gen/syscall_names.o: $(B)/gen/syscall_names.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ipostproc/out -c -o $@ $<
$(TRACEREC): $(call obj,$(REC_SRC)) $(LIBFORMAT)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The preloaded runtime: never sanitized or instrumented (it runs inside the
# traced program), no dependencies beyond libc.
RT_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -fPIC -fvisibility=hidden \
             -fno-omit-frame-pointer -Irecorder
$(LIBRT): $(RT_SRC) $(wildcard recorder/rt/*.h) $(wildcard recorder/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -shared -o $@ $(RT_SRC) -ldl -lpthread

$(B)/bench/%: $(B)/obj/bench/%.o $(LIBDECODE) $(LIBUTIL) $(LIBFORMAT)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(B)/tests/%: $(B)/obj/tests/unit/%.o $(LIBANALYZE) $(LIBDECODE) $(LIBUTIL) $(LIBFORMAT)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LDLIBS)
# a unit test of a piece of tracepp links that piece
$(B)/tests/out_fast: $(B)/obj/postproc/out/out_fast.o
$(B)/tests/vals: $(B)/obj/postproc/out/vals.o
$(B)/tests/fieldfmt: $(B)/obj/postproc/out/fieldfmt.o $(B)/obj/gen/syscall_names.o
$(B)/tests/xtable: $(B)/obj/postproc/out/xtable.o $(B)/obj/postproc/out/out_fast.o
$(B)/tests/an_lat: $(B)/obj/postproc/analysis/an_lat.o
$(B)/tests/an_merge: $(B)/obj/postproc/cmd/an_merge.o
$(B)/tests/script_map: $(B)/obj/postproc/script/sc_map.o
$(B)/tests/task_names: $(B)/obj/recorder/task_names.o
$(B)/tests/printfmt: $(B)/obj/recorder/event_format.o $(B)/obj/postproc/out/pfmt_text.o
# an_syms demangles C++ names with the C++ ABI's own demangler
$(B)/tests/an_pair: LDLIBS += -lsupc++
# a new VERSION rebuilds what prints or writes it
$(B)/obj/postproc/tracepp.o $(B)/obj/recorder/tracerec.o $(B)/obj/recorder/record_writer.o $(B)/obj/format/writer.o: VERSION

# Sample workloads: plain, -pg and -finstrument-functions builds, -O0 so the
# call trees stay as written.
SAMPLE_CFLAGS := -O0 -g -fno-omit-frame-pointer -fno-inline -Wall -pthread
$(B)/samples/%: samples/src/%.c
	@mkdir -p $(dir $@); $(CC) $(SAMPLE_CFLAGS) -o $@ $< -lpthread
$(B)/samples/%-pg: samples/src/%.c
	@mkdir -p $(dir $@); $(CC) $(SAMPLE_CFLAGS) -pg -o $@ $< -lpthread
$(B)/samples/%-fi: samples/src/%.c
	@mkdir -p $(dir $@); $(CC) $(SAMPLE_CFLAGS) -finstrument-functions -o $@ $< -lpthread
$(B)/samples/%: samples/src/%.cc
	@mkdir -p $(dir $@); g++ $(SAMPLE_CFLAGS) -o $@ $< -lpthread
$(B)/samples/%-pg: samples/src/%.cc
	@mkdir -p $(dir $@); g++ $(SAMPLE_CFLAGS) -pg -o $@ $< -lpthread
$(B)/samples/%-fi: samples/src/%.cc
	@mkdir -p $(dir $@); g++ $(SAMPLE_CFLAGS) -finstrument-functions -o $@ $< -lpthread

# The outside oracle's programs (tests/oracle/): each under -pg and
# -finstrument-functions at -O0 and -O2, as uftrace's own suite builds its
# tests; recorded by tracerec and uftrace alike (tests/t-oracle.sh).
oracle: $(ORACLE)
oflags = -g -pthread -O$(lastword $(subst -O, ,$(1))) $(if $(findstring pg-,$(1)),-pg,-finstrument-functions)
$(B)/oracle/libplugin-%.so: tests/oracle/src/plugin.c
	@mkdir -p $(dir $@); $(CC) $(call oflags,$*) -fPIC -shared -o $@ $<
define oracle_rules
$(B)/oracle/%-$(1): tests/oracle/src/%.c tests/oracle/src/dl_path.h
	@mkdir -p $$(dir $$@); $$(CC) $$(call oflags,$(1)) -o $$@ $$< -ldl
$(B)/oracle/%-$(1): tests/oracle/src/%.cc
	@mkdir -p $$(dir $$@); g++ $$(call oflags,$(1)) -o $$@ $$<
$(B)/oracle/s-lib-$(1): tests/oracle/src/s-lib.c $(B)/oracle/libplugin-$(1).so
	@mkdir -p $$(dir $$@); $$(CC) $$(call oflags,$(1)) -o $$@ $$< -L$(B)/oracle -lplugin-$(1) -Wl,-rpath,'$$$$ORIGIN'
endef
$(foreach v,$(ORACLE_V),$(eval $(call oracle_rules,$(v))))

deps:
	@missing=""; for p in $(DEB_BUILD) $(DEB_RUN) $(DEB_TEST) $(DEPS_EXTRA); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "deps: need root to install:$$missing" >&2; exit 1; fi; \
	  apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi
	@$(MAKE) -s --no-print-directory $(NPM_TOOLS)/node_modules/.package-lock.json

# npm ci: exactly the locked versions, checked against their hashes, and no
# package's install scripts run. Debian's npm only where the machine has no
# npm of its own (a Node.js from elsewhere ships its own npm).
$(NPM_TOOLS)/node_modules/.package-lock.json: $(NPM_TOOLS)/package.json $(NPM_TOOLS)/package-lock.json
	@command -v npm >/dev/null || { echo "deps: installing npm"; \
	  if [ "$$(id -u)" != 0 ]; then echo "deps: need root to install: npm" >&2; exit 1; fi; \
	  apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends npm >/dev/null; } || exit 1
	@echo "deps: npm ci in $(NPM_TOOLS)"
	@cd $(NPM_TOOLS) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null

NPROC := $(shell nproc 2>/dev/null || echo 2)

# check: the whole suite on the optimised build, then again under ASan+UBSan.
# Both builds use every core: CI's time limit counts the builds too.
check: deps
	$(MAKE) -j$(NPROC) all
	$(MAKE) -j$(NPROC) SAN=1 all
	tests/run.sh

check-fast: all
	TPP_NO_SAN=1 tests/run.sh

# the rooms' include rules (postproc/README.md), also run by tests/t-layers.sh
check-layers:
	python3 tests/layers.py .

bench: 
	$(MAKE) deps DEPS_EXTRA="$(DEB_BENCH)"
	$(MAKE) all
	bench/run.sh

demo: deps
	$(MAKE) all
	samples/demo.sh

# -max_len: without it libFuzzer takes the largest seed (84 KB) as its
# length and each run decodes a file that big three times: about 100
# runs a second. Small seeds of many chunks each (func, sched/block/net,
# one whose writer was killed) keep every part of a file in reach.
fuzz: deps
	@mkdir -p $(B)/fuzz
	clang -std=gnu11 -g -O1 -D_GNU_SOURCE -DTPP_VERSION='"$(TPP_VERSION)"' -fsanitize=fuzzer,address,undefined -Iformat -Idecoders -Iutil -Itests/unit \
	  $(PKG_CFLAGS) -o $(B)/fuzz/fuzz_reader tests/fuzz/fuzz_reader.c $(FORMAT_SRC) $(DECODE_SRC) $(UTIL_SRC) $(PKG_LIBS) -lm
	$(MAKE) $(B)/bench/tpp-gen
	mkdir -p $(B)/fuzz/corpus && cp samples/traces/*.tpp $(B)/fuzz/corpus/
	$(B)/bench/tpp-gen -o $(B)/fuzz/corpus/small-func.tpp -n 300 --mix func --threads 2 --chunk-events 64
	$(B)/bench/tpp-gen -o $(B)/fuzz/corpus/small-mixed.tpp -n 300 --mix sched,block,net --cpus 2 --threads 2 --chunk-events 64
	$(B)/bench/tpp-gen -o $(B)/fuzz/corpus/small-abandoned.tpp -n 200 --abandon --chunk-events 50
	$(MAKE) $(B)/tests/printfmt && $(B)/tests/printfmt $(B)/fuzz/corpus
	$(B)/fuzz/fuzz_reader -max_total_time=$${FUZZ_SECONDS:-60} -max_len=$${FUZZ_MAX_LEN:-8192} \
	  -rss_limit_mb=1024 $(B)/fuzz/corpus
	clang -std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -Iformat -Idecoders -Iutil -Ipostproc/out \
	  -o $(B)/fuzz/fuzz_printfmt tests/fuzz/fuzz_printfmt.c decoders/printfmt.c postproc/out/pfmt_text.c
	mkdir -p $(B)/fuzz/corpus-printfmt && cp tests/fuzz/corpus-printfmt/* $(B)/fuzz/corpus-printfmt/
	$(B)/fuzz/fuzz_printfmt -max_total_time=$${FUZZ_SECONDS:-60} -max_len=16384 -rss_limit_mb=1024 \
	  $(B)/fuzz/corpus-printfmt

# install: the products only (no tests, benchmarks or samples are built):
# the two programs, the runtime, the man pages, bash completion, the file
# format's spec and the licence. uninstall removes exactly those.
BASH_COMPDIR := $(PREFIX)/share/bash-completion/completions
INSTALLED := bin/tracepp bin/tracerec lib/tracepp/libtpprt.so share/doc/tracepp/format.md \
	share/doc/tracepp/LICENSE share/bash-completion/completions/tracepp share/bash-completion/completions/tracerec
install: $(TRACEPP) $(TRACEREC) $(LIBRT) $(MAN_STAMP)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/tracepp $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(BASH_COMPDIR) $(DESTDIR)$(PREFIX)/share/doc/tracepp
	install -m 755 $(TRACEPP) $(TRACEREC) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(LIBRT) $(DESTDIR)$(PREFIX)/lib/tracepp/
	install -m 644 $(B)/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 completion/tracepp.bash $(DESTDIR)$(BASH_COMPDIR)/tracepp
	install -m 644 completion/tracepp.bash $(DESTDIR)$(BASH_COMPDIR)/tracerec
	install -m 644 specs/format.md LICENSE $(DESTDIR)$(PREFIX)/share/doc/tracepp/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED)) $(DESTDIR)$(PREFIX)/share/man/man1/tracepp.1 \
	  $(DESTDIR)$(PREFIX)/share/man/man1/tracepp-*.1 $(DESTDIR)$(PREFIX)/share/man/man1/tracerec.1 \
	  $(DESTDIR)$(PREFIX)/share/man/man1/tracerec-*.1
	-rmdir $(DESTDIR)$(PREFIX)/lib/tracepp $(DESTDIR)$(PREFIX)/share/doc/tracepp 2>/dev/null

clean:
	rm -rf build build-san

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
