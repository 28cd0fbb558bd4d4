// bench net's peer (internal): nginx serving the same HTTP and file
// workloads as serve, started per run from a configuration the benchmark
// writes: one process (master_process off, so the process measured is the
// one that serves), sendfile on, tcp_nopush on, access log off, keep-alive
// without a request limit; the request count from its stub_status.
#pragma once

#include "netbench/netbench.hpp"

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace uringkit::netbench::detail {

// What a server reports just before and just after a run's load.
struct ServerSnapshot {
    std::uint64_t requests = 0, syscalls = 0, bytes_in = 0;
    double cpu_s = 0;
    // The server's io-wq workers since the first snapshot (io_workers.hpp).
    double offload_cpu_s = 0;
    std::uint64_t offload_ctx = 0;
};

// The nginx binary bench net runs, or empty when none is installed.
std::string nginx_binary();

class NginxPeer {
public:
    // Serves `w` (GET / answered with 128 bytes, as serve's fixed body, or
    // the files under `file_root`) on a free loopback port, pinned to `cpu`
    // (-1: not pinned).  Throws std::runtime_error naming what failed (an
    // echo workload, which nginx does not serve; nginx's own error line).
    NginxPeer(const Workload& w, const std::string& file_root, int cpu);
    ~NginxPeer();
    NginxPeer(const NginxPeer&) = delete;
    NginxPeer& operator=(const NginxPeer&) = delete;

    std::uint16_t port() const noexcept { return port_; }
    // CPU from /proc/PID/schedstat (ns, user and system), requests from
    // stub_status less the status request itself; system calls are not
    // counted (nothing outside nginx counts them without tracing it).
    ServerSnapshot snapshot();

private:
    void stop() noexcept;
    std::string status_page();  // counted: nginx counts it among its requests
    std::string dir_;           // made by mkdtemp: only this run writes there
    pid_t pid_ = -1;
    std::uint16_t port_ = 0, status_port_ = 0;
    std::uint64_t status_requests_ = 0;
};

}  // namespace uringkit::netbench::detail
