// job.h - what a training job does in both job commands (send and ring): the
// iteration schedule, the libmltcp iteration hint, the per-iteration CSV and
// JSON summary, and loading the job's profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commands.h"
#include "emu_util.h"
#include "iteration.h"
#include "netstat.h"
#include "profile.h"

namespace mltcp_emu {

// One iteration, in CLOCK_REALTIME microseconds.
using IterRecord = mltcp_workload::Iteration;

// The window repairs MLTCP's BPF datapath made on these sockets so far
// (libmltcp), summed; kCounterUnknown when any of them does not use MLTCP's
// BPF datapath, it cannot be read (not root), or the build has no libmltcp.
int64_t read_window_repairs(const std::vector<int> &fds);

// The iteration schedule every job kind shares: compute (for an async,
// Dorylus-like profile overlapped with the previous communication phase, so
// only its remainder waits), then communicate(i, bytes), one record each.
// The namespace's loss counters (netstat.h) and the window repairs on the
// job's sending sockets `send_fds` are read just before the phase's first
// byte and just after its last confirmation, outside its timing.
template <typename Communicate>
std::vector<IterRecord> run_schedule(const Profile &p, uint64_t iterations, uint64_t t_start,
				     const std::vector<int> &send_fds, Communicate communicate)
{
	std::vector<IterRecord> recs;
	uint64_t prev_end = t_start, prev_comm_start = 0;
	for (uint64_t i = 0; i < iterations; i++) {
		IterRecord r{};
		r.bytes = iteration_bytes(p, i);
		r.start_us = (int64_t)prev_end;
		uint64_t compute_from = (p.async && i > 0) ? prev_comm_start : prev_end;
		sleep_until_us(compute_from + p.compute_us);
		LossCounters before = read_loss_totals(), after;
		before.window_repairs = read_window_repairs(send_fds);
		r.comm_start_us = (int64_t)realtime_us();
		communicate(i, r.bytes);
		r.comm_end_us = r.end_us = (int64_t)realtime_us();
		after = read_loss_totals();
		after.window_repairs = read_window_repairs(send_fds);
		r.loss = loss_delta(before, after);
		prev_end = (uint64_t)r.end_us;
		prev_comm_start = (uint64_t)r.comm_start_us;
		recs.push_back(r);
	}
	return recs;
}

// Announces an iteration of `bytes` on fd through libmltcp (--hints; a
// no-op in a build without it, where load_job_profile refuses --hints).
void hint_iteration(int fd, uint64_t bytes);

// Writes --csv (if given) and the JSON summary (--json, or stdout).
// `extra_json` (",\"key\":value..." or empty) is appended to the summary.
void write_outputs(const SendOptions &o, const Profile &p, const std::vector<IterRecord> &recs,
		   uint64_t t0, uint64_t bulk_bytes, const std::string &extra_json = "");

// Checks shared by send and ring: --hints support, the profile, the job name.
Profile load_job_profile(const SendOptions &o);

}  // namespace mltcp_emu
