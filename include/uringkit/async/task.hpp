// Task<T>: a lazy coroutine that produces a T (or throws).  It starts when
// awaited, and the awaiting coroutine resumes when it finishes (by symmetric
// transfer: the finishing frame hands control straight to its awaiter).
// Each level of nesting is one frame (from a per-thread pool, frame_pool.hpp,
// so no malloc once warm); keep recursion shallow, as
// with ordinary functions (GCC turns the transfer into a tail call only when
// optimizing, so a deep recursion can still use stack in a debug build).
//
//     async::Task<int> read_twice(async::Loop& loop, int fd, char* buf) {
//         async::Result a = co_await loop.read(Fd{fd}, buf, 512, 0);
//         if (!a.ok()) co_return a.res;
//         async::Result b = co_await loop.read(Fd{fd}, buf + 512, 512, 512);
//         co_return b.ok() ? a.res + b.res : b.res;
//     }
//
// A Task owns its coroutine frame and destroys it when the Task goes away.
// Destroy a Task only when it has finished or never started: a frame
// suspended on a ring operation may hold memory that operation names (a
// buffer in the frame).  The awaiter itself is safe to destroy (the loop
// drops the completion), and so is a lent FixedBuffer (the loop keeps it
// until the final completion), but a plain buffer in the frame is not.
// Loop::spawn() and Loop::block_on() keep tasks alive until they finish.
#pragma once

#include "uringkit/async/frame_pool.hpp"
#include "uringkit/cxx20.hpp"

#include <coroutine>
#include <cstddef>
#include <exception>
#include <utility>
#include <variant>

namespace uringkit::async {

template <class T = void>
class Task;

namespace detail {

struct FinalAwaiter {
    bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) const noexcept {
        auto next = h.promise().continuation;
        return next ? next : std::noop_coroutine();
    }
    void await_resume() const noexcept {}
};

struct PromiseBase {
    // Frames from the per-thread pool (frame_pool.hpp): no malloc per Task.
    static void* operator new(std::size_t bytes) { return frame_allocate(bytes); }
    static void operator delete(void* frame, std::size_t bytes) noexcept {
        frame_free(frame, bytes);
    }

    std::coroutine_handle<> continuation;
    std::exception_ptr error;
    std::suspend_always initial_suspend() const noexcept { return {}; }
    FinalAwaiter final_suspend() const noexcept { return {}; }
    void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <class T>
struct Promise : PromiseBase {
    std::variant<std::monostate, T> value;
    Task<T> get_return_object() noexcept;
    template <class U>
    void return_value(U&& v) {
        value.template emplace<1>(std::forward<U>(v));
    }
    T take() {
        if (error) std::rethrow_exception(error);
        return std::move(std::get<1>(value));
    }
};

template <>
struct Promise<void> : PromiseBase {
    Task<void> get_return_object() noexcept;
    void return_void() const noexcept {}
    void take() const {
        if (error) std::rethrow_exception(error);
    }
};

}  // namespace detail

template <class T>
class [[nodiscard]] Task {
public:
    using promise_type = detail::Promise<T>;
    using handle = std::coroutine_handle<promise_type>;

    Task() noexcept = default;
    explicit Task(handle h) noexcept : h_(h) {}
    Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
    Task& operator=(Task&& o) noexcept {
        if (this != &o) {
            if (h_) h_.destroy();
            h_ = std::exchange(o.h_, {});
        }
        return *this;
    }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    ~Task() {
        if (h_) h_.destroy();
    }

    bool done() const noexcept { return !h_ || h_.done(); }
    explicit operator bool() const noexcept { return static_cast<bool>(h_); }

    // co_await task: runs it, resumes here with its value (or its exception).
    auto operator co_await() && noexcept {
        struct Awaiter {
            handle h;
            bool await_ready() const noexcept { return !h || h.done(); }
            std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) const noexcept {
                h.promise().continuation = awaiting;
                return h;
            }
            T await_resume() const { return h.promise().take(); }
        };
        return Awaiter{h_};
    }

    // For the loop: start without an awaiting coroutine, read the result after.
    handle release() noexcept { return std::exchange(h_, {}); }
    handle get() const noexcept { return h_; }

private:
    handle h_;
};

namespace detail {
template <class T>
Task<T> Promise<T>::get_return_object() noexcept {
    return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}
inline Task<void> Promise<void>::get_return_object() noexcept {
    return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}
}  // namespace detail

}  // namespace uringkit::async
