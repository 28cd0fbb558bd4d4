// Test-side socket helper: send every byte (a short send is resumed, EINTR
// retried); false on an error or a closed peer.  MSG_NOSIGNAL: a test must
// not die of SIGPIPE when the server under test closes first.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

namespace test_tools {

inline bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

}  // namespace test_tools
