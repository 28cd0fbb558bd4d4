// AcceptStream: a multishot accept, delivered in order to one consumer
// (streams.hpp says what every stream promises when it is destroyed).
#pragma once

#include "uringkit/async/loop.hpp"
#include "uringkit/cxx20.hpp"

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace uringkit::async {

// A multishot accept (5.19) as a stream of new sockets:
//
//     AcceptStream accepts(loop, Fd{listener});
//     for (;;) {
//         Result r = co_await accepts.next();   // res: the new fd, or -errno
//         if (r.ok()) loop.spawn(serve(r.res));
//         if (!r.more()) break;                 // the kernel ended the multishot
//     }
class AcceptStream : private detail::Pending {
public:
    AcceptStream(Loop& loop, File listener, int flags = SOCK_CLOEXEC);
    AcceptStream(const AcceptStream&) = delete;
    AcceptStream& operator=(const AcceptStream&) = delete;
    // Sockets accepted and not taken are closed; an armed accept is cancelled
    // and what it still accepts is closed by the loop.
    ~AcceptStream();

    // Arms the multishot accept (again after it ended).
    void arm() noexcept;
    bool armed() const noexcept { return armed_; }
    // Asks the kernel to end the accept; next() then yields -ECANCELED without more().
    void cancel() noexcept;

    // The peer address of an accepted socket.  A multishot accept has one
    // address buffer for all its completions (the next accept could overwrite
    // it before the coroutine reads it), so the stream asks the socket.
    struct Peer {
        sockaddr_storage address{};
        socklen_t length = 0;  // 0 when getpeername failed
    };
    static Peer peer(int fd) noexcept;

    auto next() noexcept {
        struct Awaiter {
            AcceptStream* s;
            bool await_ready() const noexcept { return s->head_ < s->queue_.size(); }
            void await_suspend(std::coroutine_handle<> h) noexcept { s->waiter_ = h; }
            Result await_resume() noexcept { return s->pop(); }
        };
        return Awaiter{this};
    }

private:
    Result pop() noexcept;
    static void on_fill(Pending* self, io_uring_sqe* const* sqes) noexcept;
    static void on_cqe(Pending* self, const Completion& c) noexcept;

    detail::LoopCore* loop_;
    File listener_;
    int flags_;
    std::vector<Result> queue_;
    std::size_t head_ = 0;
    std::coroutine_handle<> waiter_;
    std::uint64_t ud_ = 0;
    bool armed_ = false;
};

}  // namespace uringkit::async
