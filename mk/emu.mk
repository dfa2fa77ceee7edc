# Emulator, testbed, interleaving benchmark and demo (issue 5).
#
#   make check-emu          emulator unit tests, loopback end-to-end (send and
#                           ring) and bad input, testbed up/down (ctest label
#                           emu; ~10 s)
#   make bench-interleave   mixes x congestion controls x repetitions on the
#                           namespace testbed (~40 min with the defaults,
#                           55 min with REPS=5);
#                           REPS, MIXES, CCS, ITERATIONS, MLTCP_PARAMS
#                           (e.g. "slope=2048 intercept=256") select the runs;
#                           HINTS=1: mltcp jobs announce iterations (libmltcp).
#                           Mixes (docs/evaluation.md): two_identical three_mixed
#                           four oversub periods buckets striped4 striped8 tag
#                           dorylus bulk ring, crowd (8 jobs of one period, their
#                           communication fractions summing to ~1.0) and partial
#                           (2 jobs with the run's cc, 1 with its base: mltcp ->
#                           reno, mltcp_cubic -> cubic).  Per run: loss recoveries
#                           per 100 iterations (each job's namespace counters) and
#                           the host's CPU use; at the end the targets' verdicts
#   make demo               two identical jobs with cubic, reno, then mltcp, on the
#                           testbed: before/after table and pictures (~2 min)

CHECK_TARGETS += check-emu

EMU_BIN         = $(BUILD)/cmake/tools/emu/mltcp-emu
MLTCPCTL_BIN    = $(BUILD)/cmake/tools/mltcpctl/mltcpctl
METRICS_BIN     = $(BUILD)/cmake/workload/mltcp-metrics
INTERLEAVE      = /usr/bin/python3 $(ROOT)/tools/bench/interleave.py --emu $(EMU_BIN) \
                  --mltcpctl $(MLTCPCTL_BIN) --metrics $(METRICS_BIN)
REPS           ?= 3
ITERATIONS     ?= 30
MIXES          ?= two_identical three_mixed four oversub periods buckets striped4 striped8 tag dorylus bulk ring \
                  crowd partial
CCS            ?= reno cubic mltcp mltcp_cubic
MLTCP_PARAMS   ?=
HINTS          ?= 0
BENCH_IL_OUT   ?= $(BUILD)/bench-interleave/$(shell date -u +%Y%m%d-%H%M%S)

.PHONY: check-emu bench-interleave demo

check-emu: cmake-build
	$(call ctest_area,$(BUILD)/cmake,emu)

bench-interleave: cmake-build
	$(INTERLEAVE) --out $(BENCH_IL_OUT) --reps $(REPS) --iterations $(ITERATIONS) \
	    --mixes "$(MIXES)" --ccs "$(CCS)" $(foreach p,$(MLTCP_PARAMS),--param $(p)) \
	    $(if $(filter 1,$(HINTS)),--hints)

DEMO_CCS       ?= cubic reno mltcp

# Builds only what it runs (mltcpctl with the BPF datapath, mltcp-emu),
# shows progress, then the before/after table and where the pictures are;
# the targets' verdicts are make bench-interleave's (and build/demo/table.txt).
demo: deps
	@$(MAKE) --no-print-directory cmake-configure
	@echo "demo: building mltcpctl (the BPF datapath) and mltcp-emu (the job emulator)"
	@cmake --build $(BUILD)/cmake -j$(JOBS) --target mltcpctl mltcp-emu 2>&1 | \
	    { grep --line-buffered -E '^\[ *[0-9]+%\] (Building|Linking|BPF|Generating)|rror' || true; }
	@rm -rf $(BUILD)/demo
	@echo "demo: two identical training jobs share a 200 Mbit/s link, with $(DEMO_CCS)"
	@$(INTERLEAVE) --demo --out $(BUILD)/demo --reps 2 --iterations 30 \
	    --mixes two_identical --ccs "$(DEMO_CCS)"
