// emu_util.cpp - mltcp-emu's fatal exit, sleep and integer option parser.
#include "emu_util.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>

namespace mltcp_emu {

void fatal(int code, const std::string &msg)
{
	fprintf(stderr, "mltcp-emu: %s\n", msg.c_str());
	exit(code);
}

void sleep_until_us(uint64_t t)
{
	timespec ts{(time_t)(t / 1000000), (long)(t % 1000000) * 1000};
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
	}
}

std::string read_small_file(const char *path)
{
	std::ifstream f(path);
	std::string s;
	std::getline(f, s);
	return s;
}

uint64_t parse_u64_opt(const char *opt, const char *s, uint64_t max)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || v > max || s[0] == '-')
		fatal(kExitUsage, std::string("option ") + opt + ": '" + s +
					  "' is not an integer in 0.." + std::to_string(max));
	return v;
}

}  // namespace mltcp_emu
