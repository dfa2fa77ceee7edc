// emu_util.h - what every part of mltcp-emu shares: its exit codes, I/O
// sizes and timeouts, the fatal-error exit, a sleep on the records' clock
// and the option parser for unsigned integers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "iteration.h"	// realtime_us(): the clock of the per-iteration records

namespace mltcp_emu {

// The workload library (workload/: profiles, the per-iteration record and
// its CSV and clock, statistics) is used unqualified throughout the emulator.
using namespace mltcp_workload;

// Exit codes (documented in --help): scripts and tests tell failures apart.
constexpr int kExitUsage = 2;		// bad command line or profile
constexpr int kExitCc = 3;		// congestion control not available
constexpr int kExitNet = 4;		// connect / transfer failure
constexpr int kExitHints = 5;		// --hints without libmltcp

constexpr size_t kChunk = 256 * 1024;	// bytes per send()/recv() call
constexpr int kConnectTimeoutMs = 5000;
constexpr int kIoTimeoutMs = 60000;	// a phase stuck this long is a failure
constexpr uint64_t kDefaultBinUs = 10000;

// Prints "mltcp-emu: msg" to stderr and exits with `code`.
[[noreturn]] void fatal(int code, const std::string &msg);

// Sleeps until realtime_us() (workload/iteration.h) reaches t.
void sleep_until_us(uint64_t t);

// The first line of a small file ("" when it cannot be read).
std::string read_small_file(const char *path);

// An integer option in 0..max; anything else is a usage error naming `opt`.
uint64_t parse_u64_opt(const char *opt, const char *s, uint64_t max);

}  // namespace mltcp_emu
