// The NVMe namespace behind a block device, for passthrough (op::NvmeCmd on
// a BigRing): the namespace's generic char device (/dev/ngXnY, Linux 5.19),
// its id and its logical block size, read from sysfs.  And the words for an
// NVMe status a passthrough completion returns.
#pragma once

#include "uringkit/cxx20.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace uringkit::nvme {

struct Namespace {
    std::string block_device;     // /dev/nvme0n1
    std::string char_device;      // /dev/ng0n1: what NvmeCmd is sent to
    std::string controller;       // /dev/nvme0: admin commands (NvmeCmd::identify)
    std::uint32_t nsid = 0;       // the namespace id every command names
    std::uint32_t lba_size = 0;   // bytes per logical block
    std::uint64_t lba_count = 0;  // logical blocks in the namespace
};

// The namespace of `block_device` (a path to /dev/nvmeXnY, or a link to it).
// Empty, with the reason in `why`, when it is not an NVMe namespace, sysfs
// does not say, or its char device is missing (a kernel before 5.19, or a
// /dev without the node: its major:minor is in /sys/class/nvme-generic/).
std::optional<Namespace> find_namespace(const std::string& block_device, std::string& why);

// A passthrough completion's res in words: 0 "success", -errno as
// strerror, a positive value as the NVMe status it is (status code type and
// code: "LBA Out of Range (SCT 0, SC 0x80)"), with "do not retry" when the
// DNR bit is set.
std::string status_text(int res);

}  // namespace uringkit::nvme
