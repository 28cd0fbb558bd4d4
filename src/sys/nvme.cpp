// sysfs reading for nvme.hpp.  Layout (drivers/nvme/host/core.c): the block
// device nvme<ctrl>n<ns> has /sys/block/<name>/{nsid,size,queue/
// logical_block_size}; its generic char device ng<ctrl>n<ns> (5.19) sits in
// /sys/class/nvme-generic/.
#include "uringkit/sys/nvme.hpp"

#include <sys/stat.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace uringkit::nvme {
namespace {

template <class T>
bool read_number(const std::string& path, T& out) {
    std::ifstream in(path);
    return static_cast<bool>(in >> out);
}

// "nvme0n1" -> {"0", "1"}; false for anything else (a partition nvme0n1p1,
// a controller nvme0, a multipath path nvme0c0n1).
bool split_namespace(const std::string& name, std::string& ctrl, std::string& ns) {
    auto digits = [](const std::string& s) {
        return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
    };
    if (name.rfind("nvme", 0) != 0) return false;
    const std::size_t n = name.find('n', 4);
    if (n == std::string::npos) return false;
    ctrl = name.substr(4, n - 4);
    ns = name.substr(n + 1);
    return digits(ctrl) && digits(ns);
}

}  // namespace

std::optional<Namespace> find_namespace(const std::string& block_device, std::string& why) {
    char resolved[PATH_MAX];
    if (!::realpath(block_device.c_str(), resolved)) {
        why = block_device + ": " + std::strerror(errno);
        return std::nullopt;
    }
    const std::string path = resolved;
    const std::string name = path.substr(path.rfind('/') + 1);
    std::string ctrl, nsnum;
    if (!split_namespace(name, ctrl, nsnum)) {
        why = block_device + ": not an NVMe namespace (/dev/nvmeXnY)";
        return std::nullopt;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) {
        why = block_device + ": not a block device";
        return std::nullopt;
    }
    Namespace ns;
    ns.block_device = path;
    const std::string sys = "/sys/block/" + name;
    std::uint64_t sectors = 0;
    if (!read_number(sys + "/nsid", ns.nsid) ||
        !read_number(sys + "/queue/logical_block_size", ns.lba_size) ||
        !read_number(sys + "/size", sectors) || ns.lba_size == 0) {
        why = block_device + ": sysfs does not give its namespace id and block size (" + sys + ")";
        return std::nullopt;
    }
    ns.lba_count = sectors * 512 / ns.lba_size;  // sysfs counts 512-byte sectors
    const std::string ng = "ng" + ctrl + "n" + nsnum;
    ns.char_device = "/dev/" + ng;
    ns.controller = "/dev/nvme" + ctrl;
    if (::stat(ns.char_device.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) {
        std::string dev;
        std::ifstream numbers("/sys/class/nvme-generic/" + ng + "/dev");
        if (numbers >> dev && dev.find(':') != std::string::npos)
            why = block_device + ": " + ns.char_device + " is missing (mknod " + ns.char_device +
                  " c " + dev.replace(dev.find(':'), 1, " ") + ")";
        else
            why = block_device + ": no generic char device " + ns.char_device +
                  " (NVMe passthrough needs Linux 5.19)";
        return std::nullopt;
    }
    return ns;
}

std::string status_text(int res) {
    if (res == 0) return "success";
    if (res < 0) return std::strerror(-res);
    // The status field as the driver keeps it: SC in bits 0-7, SCT in 8-10,
    // More in 13, DNR in 14 (NVMe base specification, "Status Field").
    const unsigned sc = res & 0xff, sct = (res >> 8) & 0x7;
    const char* what = nullptr;
    if (sct == 0) {
        switch (sc) {
            case 0x01:
                what = "Invalid Command Opcode";
                break;
            case 0x02:
                what = "Invalid Field in Command";
                break;
            case 0x04:
                what = "Data Transfer Error";
                break;
            case 0x06:
                what = "Internal Error";
                break;
            case 0x0b:
                what = "Invalid Namespace or Format";
                break;
            case 0x80:
                what = "LBA Out of Range";
                break;
            case 0x81:
                what = "Capacity Exceeded";
                break;
            case 0x82:
                what = "Namespace Not Ready";
                break;
        }
    } else if (sct == 2) {
        switch (sc) {
            case 0x80:
                what = "Write Fault";
                break;
            case 0x81:
                what = "Unrecovered Read Error";
                break;
            case 0x86:
                what = "Access Denied";
                break;
        }
    }
    char codes[48];
    std::snprintf(codes, sizeof codes, " (SCT %u, SC 0x%02x)", sct, sc);
    return std::string(what ? what : "NVMe status") + codes +
           ((res & 0x4000) ? ", do not retry" : "");
}

}  // namespace uringkit::nvme
