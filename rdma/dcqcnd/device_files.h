// device_files.h - where a device's firmware DCQCN parameters live and how
// they are read and written: operator names (RDMA device mlx5_0 or netdev
// eth2) resolved through sysfs to the PCI function, the netdev and the port
// counters; the backend (debugfs cc_params/ or MLNX_OFED sysfs) chosen per
// device; single-value file IO that keeps errno for the messages.
#pragma once

#include <cstdint>
#include <string>

#include "cc_params.h"

namespace dcqcnd {

enum class BackendChoice { kAuto, kDebugfs, kSysfs };

// What the command line says about one device.
struct DeviceSpec {
	std::string name;	// RDMA device or netdev, as the operator names it
	std::string ibdev, netdev;
	unsigned port = 1;
	std::string hints;	// FIFO of "iter <bytes>" / "sent <bytes>" lines
	std::string state_file;	// empty: <state dir>/<key>.state
	BackendChoice backend = BackendChoice::kAuto;
};

// Everything the daemon needs to touch for one device.
struct DevicePaths {
	std::string key;	// ibdev, or the netdev without one: names state files
	std::string ibdev, netdev, pci;
	unsigned port = 1;
	uint64_t line_mbps = 0;	// netdev speed; 0 when it reports none
	Backend backend = Backend::kSysfs;
	std::string param_dir;	// cc_params/ or ecn/
	std::string ai_path, hai_path;
	std::string counter_path;	// port_xmit_data, empty without an ibdev
	std::string also_present;	// the other backend's directory, if it exists
};

struct Layout {
	std::string root = "/";		// prefix of /sys (a mirrored tree in tests)
	std::string debugfs = "sys/kernel/debug";	// under root
	std::string counter = "counters/port_xmit_data";
};

std::string JoinPath(const std::string &a, const std::string &b);

// Resolves a spec; false with *err naming what is missing and where.
bool ResolveDevice(const Layout &l, const DeviceSpec &s, DevicePaths *d, std::string *err);

// Reads/writes one decimal value; false with *err = "<path>: <reason>" and
// *errnum = the errno (0 for a parse error).
bool ReadValue(const std::string &path, uint64_t *v, std::string *err, int *errnum);
bool WriteValue(const std::string &path, uint64_t v, std::string *err, int *errnum);

// A parameter file must exist, be a regular file, carry a write bit (root
// bypasses the bits on open, so they are checked explicitly) and accept its
// own value back; *value is what it held.
bool CheckParamFile(const std::string &path, uint64_t *value, std::string *err, int *errnum);

// Why an errno happened, in the operator's terms, for the backend at hand.
std::string ExplainErrno(const Layout &l, Backend b, int errnum);

}  // namespace dcqcnd
