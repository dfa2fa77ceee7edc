// rx_log.h - received payload bytes per job per time bin, for throughput
// timelines and the bulk flow's share (recv --log-dir, ring --rx-log).
// Thread-safe: every receiving thread of `recv` accounts into one log.
#pragma once

#include <cstdint>
#include <string>

namespace mltcp_emu {

// Sets the time origin (CLOCK_REALTIME us) and the bin width (0: default).
void rx_log_start(uint64_t t0_us, uint64_t bin_us);

// Adds n bytes received now to `job`'s current bin.
void rx_log_account(const std::string &job, uint64_t n);

// Writes one job's bins to `path` as bin_start_us,bytes; false (with a
// message on stderr) when it cannot.
bool rx_log_write(const std::string &path, const std::string &job);

// Writes every job's bins to dir/rx-<job>.csv.
void rx_log_write_all(const std::string &dir);

}  // namespace mltcp_emu
