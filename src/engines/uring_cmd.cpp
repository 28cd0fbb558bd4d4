// uring-cmd and uring-cmd-reg: NVMe passthrough.  Each read or write is an
// NVMe command (op::NvmeCmd) sent through the namespace's generic char
// device (/dev/ngXnY) on a ring of 128-byte SQEs (BigRing), skipping the
// block layer's bio and request set-up: fio's io_uring_cmd engine and
// t/io_uring -u1.  uring-cmd-reg takes the data from one registered buffer
// (IORING_URING_CMD_FIXED), as fio's fixedbufs.  The I/O never goes through
// the page cache, whatever --direct says.
#include "uring_loop.hpp"

#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/big_ring.hpp"
#include "uringkit/sys/nvme.hpp"
#include "uringkit/util/unique_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace uringkit::engines {
std::string memlock_refusal(std::size_t bytes);  // uring_reg.cpp
}

namespace uringkit::engines::detail {
namespace {

// The NVMe namespace the benchmark's descriptor is open on.
nvme::Namespace namespace_of(int fd) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISBLK(st.st_mode))
        throw EngineUnavailable(
            "NVMe passthrough needs --filename naming an NVMe namespace (/dev/nvmeXnY), not a "
            "file");
    std::ifstream uevent("/sys/dev/block/" + std::to_string(major(st.st_rdev)) + ":" +
                         std::to_string(minor(st.st_rdev)) + "/uevent");
    std::string name;
    for (std::string line; std::getline(uevent, line);)
        if (line.rfind("DEVNAME=", 0) == 0) name = line.substr(8);
    std::string why;
    auto ns =
        nvme::find_namespace(name.empty() ? std::string("(unknown device)") : "/dev/" + name, why);
    if (!ns) throw EngineUnavailable(why);
    return *ns;
}

class UringCmdJob final : public UringJobBase {
public:
    UringCmdJob(const JobContext& ctx, bool fixed)
        : UringJobBase(ctx), ns_(namespace_of(ctx.fd)), fixed_(fixed), big_(make(ctx)) {
        if (w_.bs % ns_.lba_size != 0)
            throw EngineUnavailable("--bs " + std::to_string(w_.bs) + " is not a multiple of " +
                                    ns_.block_device + "'s " + std::to_string(ns_.lba_size) +
                                    "-byte logical blocks");
        ng_ = util::UniqueFd(
            ::open(ns_.char_device.c_str(), (writes(w_.rw) ? O_RDWR : O_RDONLY) | O_CLOEXEC));
        if (!ng_) throw EngineUnavailable(ns_.char_device + ": " + std::strerror(errno));
        if (fixed_) {
            const iovec iov{buffers_.data(), buffers_.bytes()};
            try {
                big_.ring().register_buffers({&iov, 1});
            } catch (const RingError& e) {
                if (e.code().value() == ENOMEM)
                    throw EngineUnavailable(memlock_refusal(iov.iov_len));
                throw EngineUnavailable(e.what());
            }
        }
    }

    PhaseResult run(const Phase& ph) override {
        const std::uint32_t bs = w_.bs, blocks = bs / ns_.lba_size;
        const Fd ng{ng_.get()};
        return run_loop(
            big_.ring(), ph,
            [&](Ring&, unsigned s, const Io& io) {
                void* buf = buffers_.slot(s);
                const std::uint64_t lba = io.offset / ns_.lba_size;
                op::NvmeCmd cmd = io.write ? op::NvmeCmd::write(ng, ns_.nsid, lba, blocks, buf, bs)
                                           : op::NvmeCmd::read(ng, ns_.nsid, lba, blocks, buf, bs);
                if (fixed_) cmd.fixed_buffer(0);
                Sqe sqe = big_.prepare(cmd);
                if (!sqe) return false;
                sqe.user_data(s);
                return true;
            },
            // 0 is the whole transfer; an NVMe status (positive) is an I/O error.
            [bs](const Completion& c) {
                return c.res == 0 ? static_cast<int>(bs) : c.res > 0 ? -EIO : c.res;
            });
    }

private:
    static BigRing make(const JobContext& ctx) {
        try {
            return BigRing::create(ctx.depth, lean_ring_options());
        } catch (const RingError& e) {
            throw EngineUnavailable(std::string("128-byte SQEs (Linux 5.19): ") + e.what());
        }
    }
    nvme::Namespace ns_;
    bool fixed_;
    BigRing big_;
    util::UniqueFd ng_;
};

}  // namespace

std::unique_ptr<EngineJob> start_uring_cmd(const JobContext& ctx) {
    return std::make_unique<UringCmdJob>(ctx, false);
}
std::unique_ptr<EngineJob> start_uring_cmd_reg(const JobContext& ctx) {
    return std::make_unique<UringCmdJob>(ctx, true);
}

}  // namespace uringkit::engines::detail
