# MLTCP top-level build.  Every area keeps its rules in its own fragment
# (mk/*.mk); this file holds what they share.  Out-of-source: all outputs go
# under $(BUILD).
#
#   make deps         install the Debian packages the project needs
#   make all          build everything
#   make check        install, build and run every test
#   make demo         the main job: jobs interleaving on this machine
#   make bench-<area> benchmarks; each ends in "RESULT key=value ..." lines
#   make clean

SHELL      := /bin/bash
.SHELLFLAGS := -o pipefail -c
ROOT       := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD      ?= $(ROOT)/build
JOBS       ?= $(shell nproc)
CMAKE_TYPE ?= RelWithDebInfo

# The tests of one area: tests/<area>/, registered with CTest under the label
# <area> (cmake/MltcpTests.cmake).  $(call ctest_area,<build dir>,<area>)
ctest_area = cd $(1) && ctest --output-on-failure --no-tests=error -L '^$(2)$$'

# Fragments add to these.
DEB_PACKAGES   := build-essential cmake pkg-config clang llvm libclang-rt-14-dev \
                  libgtest-dev libgmock-dev libbenchmark-dev
ALL_TARGETS    := cmake-build
CHECK_TARGETS  :=
CLEAN_DIRS     := $(BUILD)

.PHONY: all deps check demo clean cmake-build cmake-configure

all: deps
	@$(MAKE) --no-print-directory $(ALL_TARGETS)

# The core's checks first: every datapath stands on it.
include $(ROOT)/mk/core.mk
include $(filter-out $(ROOT)/mk/core.mk,$(sort $(wildcard $(ROOT)/mk/*.mk)))

deps:
	@$(ROOT)/tools/install-deps.sh $(sort $(DEB_PACKAGES))

$(BUILD)/cmake/CMakeCache.txt:
	@mkdir -p $(BUILD)/cmake
	cmake -S $(ROOT) -B $(BUILD)/cmake -DCMAKE_BUILD_TYPE=$(CMAKE_TYPE) >/dev/null || \
	    { rm -f $@; exit 1; }	# a failed configure leaves a cache but no Makefile

cmake-configure: $(BUILD)/cmake/CMakeCache.txt

cmake-build: cmake-configure
	cmake --build $(BUILD)/cmake -j$(JOBS)

# Tests run in the order the fragments list them; a failure stops the run.
check: deps
	@$(MAKE) --no-print-directory $(CHECK_TARGETS)
	@echo "check: $(words $(CHECK_TARGETS)) passed, 0 failed"

clean:
	rm -rf $(CLEAN_DIRS)
