#include "net/stats.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace uringkit::net {

StatsSnapshot StatsSnapshot::sum(std::span<const ServerStats> threads) noexcept {
    StatsSnapshot s;
    for (const ServerStats& t : threads) {
        s.accepted += t.accepted.get();
        s.rejected += t.rejected.get();
        s.active += t.active.get();
        s.idle_closed += t.idle_closed.get();
        s.requests += t.requests.get();
        s.status_2xx += t.status_2xx.get();
        s.status_4xx += t.status_4xx.get();
        s.status_5xx += t.status_5xx.get();
        s.bytes_in += t.bytes_in.get();
        s.bytes_out += t.bytes_out.get();
        s.bytes_spliced += t.bytes_spliced.get();
        s.body_read_fallbacks += t.body_read_fallbacks.get();
        s.syscalls += t.syscalls.get();
        s.recv_rearms += t.recv_rearms.get();
        s.recv_buffers += t.recv_buffers.get();
        s.enobufs += t.enobufs.get();
        s.accept_backoffs += t.accept_backoffs.get();
        s.batch_waits += t.batch_waits.get();
        s.send_timeouts += t.send_timeouts.get();
        s.pending += t.pending.get();
        s.pending_peak =
            std::max(s.pending_peak, t.pending_peak.get());  // one connection's, not a sum
        s.read_pauses += t.read_pauses.get();
    }
    return s;
}

std::string StatsSnapshot::to_json(std::string_view engine, std::string_view mode,
                                   unsigned threads) const {
    nlohmann::ordered_json j;
    j["engine"] = engine;
    j["mode"] = mode;
    j["threads"] = threads;
    j["connections"] = {{"accepted", accepted},
                        {"rejected", rejected},
                        {"active", active},
                        {"idle_closed", idle_closed},
                        {"send_timeouts", send_timeouts}};
    j["requests"] = requests;
    j["responses"] = {{"2xx", status_2xx}, {"4xx", status_4xx}, {"5xx", status_5xx}};
    j["bytes_in"] = bytes_in;
    j["bytes_out"] = bytes_out;
    j["bytes_spliced"] = bytes_spliced;
    j["body_read_fallbacks"] = body_read_fallbacks;
    j["syscalls"] = syscalls;
    j["recv_rearms"] = recv_rearms;
    j["recv_buffers"] = recv_buffers;
    j["enobufs"] = enobufs;
    j["accept_backoffs"] = accept_backoffs;
    j["batch_waits"] = batch_waits;
    j["output"] = {
        {"pending", pending}, {"pending_peak", pending_peak}, {"read_pauses", read_pauses}};
    return j.dump() + "\n";
}

}  // namespace uringkit::net
