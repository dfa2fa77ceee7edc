# Simulator: ns-3 (Debian's libns3-dev 3.37) models of MLTCP-Reno,
# MLTCP-CUBIC and MLTCP-DCQCN driven by core/, the training-job scenario,
# its tests, smoke run, benchmark and the experiments that write docs/.
# libgsl-dev: ns-3's pkg-config files name GSL, which its libraries link.

DEB_PACKAGES  += libns3-dev libgsl-dev python3-matplotlib
CHECK_TARGETS += check-sim
SIM_BIN       := $(BUILD)/cmake/sim/mltcp-sim
SIM_PY        := /usr/bin/python3

.PHONY: sim check-sim sim-smoke bench-sim sim-experiments

sim: cmake-configure
	@test -f /usr/include/ns3/tcp-cubic.h || { echo "sim: ns-3 missing: run 'make deps'"; exit 1; }
	cmake --build $(BUILD)/cmake -j$(JOBS) --target mltcp-sim sim_model_tests mltcp-metrics

# Model unit tests and bad-input checks (ctest label sim), then the smoke run.
check-sim: sim
	cd $(BUILD)/cmake && ctest --output-on-failure -L sim
	@$(MAKE) --no-print-directory sim-smoke

sim-smoke: sim
	$(ROOT)/tests/sim/smoke.sh $(SIM_BIN)

bench-sim: sim
	$(SIM_PY) $(ROOT)/sim/experiments/run.py --sim $(SIM_BIN) --bench

# Regenerates docs/simulation-results.md, docs/simulation-validation.md and
# docs/img/sim-*.png (about 30-45 minutes on 2 cores).  SIM_HOST_SUMMARY: a
# `make bench-interleave` session's summary.json (e.g.
# build/bench-interleave/decrease1/summary.json); when set, the validation
# table gets its host columns (host slowdown, p99 ratio, interleaved at, and
# whether each agrees with the simulator's) from it.
SIM_HOST_SUMMARY ?=
sim-experiments: sim
	$(SIM_PY) $(ROOT)/sim/experiments/run.py --sim $(SIM_BIN) --docs $(ROOT)/docs \
	  $(if $(SIM_HOST_SUMMARY),--host-summary $(SIM_HOST_SUMMARY))
