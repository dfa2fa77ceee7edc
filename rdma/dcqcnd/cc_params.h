// cc_params.h - the firmware DCQCN parameters of mlx5 NICs, as the two host
// interfaces name them, in one table: the inbox driver's debugfs files
// (/sys/kernel/debug/mlx5/<pci>/cc_params/<name>) and MLNX_OFED's sysfs
// files (/sys/class/net/<netdev>/ecn/<roce_rp|roce_np>/<name>).  Both pass
// the value unchanged to the firmware (MODIFY_CONG_PARAMS), so a parameter
// has one unit and one range whichever interface carries it.  Sources are
// cited in cc_params.cpp next to the table.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <string>

namespace dcqcnd {

enum class Backend { kDebugfs, kSysfs };

// What the daemon does with a parameter: only the two increase steps are
// scaled by the MLTCP gain; the rest are listed so that the table is the
// driver's whole list (the tests build their mirrored trees from it).
enum class Role { kListed, kAiRate, kHaiRate };

// A range bound that means "the port's line rate in Mbit/s".
inline constexpr uint64_t kLineRate = UINT64_MAX;
// The line rate assumed when the netdev reports no speed: 800 Gbit/s, the
// fastest ConnectX port.
inline constexpr uint64_t kMaxLineMbps = 800000;

struct CcParam {
	const char *field;	// firmware (PRM) field, include/linux/mlx5/mlx5_ifc.h
	const char *debugfs;	// cc_params/<name>, drivers/infiniband/hw/mlx5/cong.c
	const char *sysfs;	// ecn/<dir>/<name> under the netdev (MLNX_OFED); nullptr: none
	const char *unit;
	uint64_t min, max;	// inclusive; kLineRate: the port's speed
	uint64_t fw_default;	// NVIDIA's documented firmware default
	Role role;
};

extern const CcParam kCcParams[];
extern const size_t kNumCcParams;

const char *BackendName(Backend b);
// The parameter's name on that interface (nullptr if it has none there).
const char *ParamName(const CcParam &p, Backend b);
const CcParam *FindParam(Backend b, const std::string &name);
const CcParam *FindRole(Role r);
uint64_t ParamMax(const CcParam &p, uint64_t line_mbps);
bool ParamInRange(const CcParam &p, uint64_t v, uint64_t line_mbps);
// "1..100000 Mbit/s"
std::string RangeText(const CcParam &p, uint64_t line_mbps);
// The table as text (one parameter a line), for --list-params.
void PrintTable(FILE *f);

}  // namespace dcqcnd
