// serve --root when the engine makes the file operations itself (the uring
// engine's --file-io ring): the session asks for one open or one read at a
// time through file_want(), holds everything after it in order, and hands
// back the descriptors it is done with.  A fake engine here does each
// operation with a plain system call and checks the protocol: pipelined
// requests answered in order, nothing answered while an operation is
// pending, Connection: close only after the answer, a truncated file ending
// the connection, and no descriptor left open.
#include <gtest/gtest.h>

#include "net/session.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace uringkit::net;
namespace fs = std::filesystem;

namespace {

class SessionFileIo : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-session-files-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        base_ = tmpl;
        fs::create_directory(base_ / "sub");
        std::ofstream(base_ / "a.txt") << "hello, file\n";
        std::ofstream(base_ / "sub" / "index.html") << "<p>i</p>\n";
        std::ofstream(base_ / "big.bin") << std::string(100000, 'b');
        root_.fd = ::open(base_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        ASSERT_GE(root_.fd, 0);
    }
    void TearDown() override {
        ::close(root_.fd);
        fs::remove_all(base_);
    }

    // Does what the session waits for, as the engine would on its ring,
    // until it waits for nothing; returns the last feed-like result.  The
    // room handed back is what `cap` leaves beside `out`, as the engine's
    // output cap does.
    bool drive(Session& s, std::string& out, bool keep, std::size_t cap = Session::kNoLimit) {
        const auto room = [&] {
            return cap == Session::kNoLimit ? cap : cap > out.size() ? cap - out.size() : 0;
        };
        for (int steps = 0; keep && steps < 1000; ++steps) {
            close_done(s);
            const Session::FileWant w = s.file_want();
            if (w.kind == Session::FileWant::Kind::None) break;
            if (w.kind == Session::FileWant::Kind::Open) {
                ++opens_;
                OpenedFile f = open_beneath(root_.fd, w.name, root_.resolve);
                keep = s.file_opened(f, out, room());
            } else {
                ++reads_;
                const std::size_t at = out.size();
                out.resize(at + w.length);
                const ssize_t n =
                    ::pread(w.fd, out.data() + at, w.length, static_cast<off_t>(w.offset));
                out.resize(at + static_cast<std::size_t>(n > 0 ? n : 0));
                if (truncate_after_first_read_) {
                    EXPECT_EQ(::truncate((base_ / "big.bin").c_str(),
                                         static_cast<off_t>(w.offset + static_cast<off_t>(n))),
                              0);
                    truncate_after_first_read_ = false;
                }
                keep = s.file_read(n, out, room());
            }
            // While an operation is pending nothing may be answered.
            const std::size_t size = out.size();
            if (s.file_want().kind != Session::FileWant::Kind::None) {
                EXPECT_TRUE(s.feed({}, out, room()));
                EXPECT_EQ(out.size(), size) << "answered while waiting";
            }
        }
        close_done(s);
        return keep;
    }
    void close_done(Session& s) {
        for (const int fd : s.done_fds()) {
            EXPECT_EQ(::close(fd), 0);
            ++closed_;
        }
        s.done_fds().clear();
    }

    fs::path base_;
    StaticRoot root_;
    ServerStats stats_;
    int opens_ = 0, reads_ = 0, closed_ = 0;
    bool truncate_after_first_read_ = false;
};

std::size_t count(const std::string& hay, std::string_view needle) {
    std::size_t n = 0;
    for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
}

TEST_F(SessionFileIo, PipelinedRequestsWaitForEachOperationInOrder) {
    Responder r(root_, HttpLimits{}, stats_, {.engine_file_io = true});
    Session s(r);
    std::string out;
    const std::string req =
        "GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"
        "HEAD /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"
        "GET /missing HTTP/1.1\r\nHost: x\r\n\r\n"
        "GET /sub HTTP/1.1\r\nHost: x\r\n\r\n"
        "GET /sub/ HTTP/1.1\r\nHost: x\r\n\r\n"
        "POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
        "GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    bool keep = s.feed(req, out);
    EXPECT_TRUE(keep);
    EXPECT_EQ(out, "") << "the first request waits for its open";
    EXPECT_EQ(s.file_want().kind, Session::FileWant::Kind::Open);
    EXPECT_STREQ(s.file_want().name, "a.txt");
    keep = drive(s, out, keep);
    EXPECT_FALSE(keep) << "Connection: close, after the last body";
    EXPECT_TRUE(s.closing());
    // In order: 200 a.txt, 200 HEAD, 404, 301, 200 index, 405, 200 big.
    const std::size_t statuses[] = {out.find("200 OK"), out.find("404 "),
                                    out.find("301 "),   out.find("<p>i</p>"),
                                    out.find("405 "),   out.find(std::string(100000, 'b'))};
    for (std::size_t i = 1; i < std::size(statuses); ++i) {
        ASSERT_NE(statuses[i], std::string::npos) << i;
        EXPECT_LT(statuses[i - 1], statuses[i]) << i;
    }
    EXPECT_EQ(count(out, "hello, file\n"), 1u);
    EXPECT_GE(reads_, 1);
    EXPECT_EQ(closed_, opens_ - 1) << "every opened file is closed (/missing opened nothing)";
}

TEST_F(SessionFileIo, ReadsStopAtTheRoomAndGoOnWhenFedAgain) {
    Responder r(root_, HttpLimits{}, stats_, {.engine_file_io = true});
    Session s(r);
    std::string out;
    constexpr std::size_t kRoom = 16 * 1024;
    bool keep =
        drive(s, out, s.feed("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n", out, kRoom), kRoom);
    EXPECT_TRUE(keep);
    EXPECT_TRUE(s.held()) << "out of room mid-body";
    EXPECT_LE(out.size(), kRoom + 512);
    std::string all = out;
    for (int i = 0; i < 100 && s.held(); ++i) {
        out.clear();  // the engine sent it
        keep = drive(s, out, s.feed({}, out, kRoom), kRoom);
        all += out;
    }
    EXPECT_FALSE(s.held());
    EXPECT_EQ(all.substr(all.find("\r\n\r\n") + 4), std::string(100000, 'b'));
    EXPECT_EQ(closed_, 1);
}

TEST_F(SessionFileIo, ATruncatedFileEndsTheConnectionAfterItsBytes) {
    Responder r(root_, HttpLimits{}, stats_, {.engine_file_io = true});
    Session s(r);
    std::string out;
    truncate_after_first_read_ = true;
    constexpr std::size_t kRoom = 16 * 1024;
    bool keep =
        s.feed("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n",
               out, kRoom);
    keep = drive(s, out, keep, kRoom);
    std::string all = out;
    for (int i = 0; i < 10 && keep && s.held(); ++i) {
        out.clear();  // the engine sent it
        keep = drive(s, out, s.feed({}, out, kRoom), kRoom);
        all += out;
    }
    EXPECT_FALSE(keep) << "the Content-Length cannot be met";
    EXPECT_EQ(all.find("hello, file"), std::string::npos) << "nothing answered after it";
    const std::string body = all.substr(all.find("\r\n\r\n") + 4);
    EXPECT_GT(body.size(), 0u);
    EXPECT_LT(body.size(), 100000u);
    EXPECT_EQ(body, std::string(body.size(), 'b')) << "the file's own bytes, never padding";
    EXPECT_EQ(closed_, 1);
}

TEST_F(SessionFileIo, ResetClosesWhatTheEngineDidNotTake) {
    Responder r(root_, HttpLimits{}, stats_, {.engine_file_io = true});
    std::string out;
    Session s(r);
    s.feed("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n", out);
    OpenedFile f = open_beneath(root_.fd, s.file_want().name, root_.resolve);
    const int fd = f.fd;
    s.file_opened(f, out, Session::kNoLimit);
    EXPECT_EQ(s.file_want().kind, Session::FileWant::Kind::Read);
    s.reset();  // the connection closed mid-body
    EXPECT_EQ(s.file_want().kind, Session::FileWant::Kind::None);
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the body's descriptor is closed";
}

// engine_sends_body (the epoll engine's sendfile): the session opens with
// system calls, appends the head, then waits for the engine to move the
// body, in as many pieces as the socket takes, before it answers the next
// request; the file is closed once the body is out.
TEST_F(SessionFileIo, TheEngineSendsTheBodyInPiecesBeforeTheNextAnswer) {
    Responder r(root_, HttpLimits{}, stats_, {.engine_sends_body = true});
    Session s(r);
    std::string out;
    bool keep = s.feed(
        "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"
        "GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        out);
    ASSERT_TRUE(keep);
    EXPECT_NE(out.find("Content-Length: 100000\r\n"), std::string::npos);
    EXPECT_TRUE(out.ends_with("\r\n\r\n")) << "the head only: the body is the engine's to send";
    std::string wire = std::exchange(out, {});
    int sends = 0, fd = -1;
    while (s.file_want().kind == Session::FileWant::Kind::Send) {
        const Session::FileWant w = s.file_want();
        if (fd < 0) fd = w.fd;
        EXPECT_TRUE(s.feed({}, out)) << "nothing is answered meanwhile";
        EXPECT_EQ(out.size(), 0u);
        // The socket takes 30000 bytes at a time.
        std::string piece(std::min<std::size_t>(w.length, 30000), '\0');
        const ssize_t n = ::pread(w.fd, piece.data(), piece.size(), static_cast<off_t>(w.offset));
        ASSERT_EQ(n, static_cast<ssize_t>(piece.size()));
        wire += piece;
        keep = s.file_sent(n, out, Session::kNoLimit);
        wire += std::exchange(out, {});  // the next head, once a body is out
        ++sends;
    }
    EXPECT_EQ(sends, 5) << "4 pieces of big.bin, 1 of a.txt";
    EXPECT_FALSE(keep) << "Connection: close, answered";
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the body's descriptor is closed";
    const std::size_t body_at = wire.find("\r\n\r\n") + 4;
    const std::size_t second = wire.find("HTTP/1.1 200", body_at);
    ASSERT_NE(second, std::string::npos);
    EXPECT_TRUE(wire.substr(body_at, second - body_at) == std::string(100000, 'b'));
    EXPECT_TRUE(wire.ends_with("\r\n\r\nhello, file\n"));
}

// The file ends before its Content-Length (truncated): sendfile returns 0
// and the connection ends; nothing more is answered.
TEST_F(SessionFileIo, ASendThatFindsTheFileEndedEndsTheConnection) {
    Responder r(root_, HttpLimits{}, stats_, {.engine_sends_body = true});
    Session s(r);
    std::string out;
    ASSERT_TRUE(s.feed(
        "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n", out));
    ASSERT_EQ(s.file_want().kind, Session::FileWant::Kind::Send);
    out.clear();
    EXPECT_FALSE(s.file_sent(0, out, Session::kNoLimit));
    EXPECT_TRUE(s.closing());
    EXPECT_EQ(out, "");
    EXPECT_EQ(s.file_want().kind, Session::FileWant::Kind::None);
}

}  // namespace
