// `serve --root` through every engine, in process: file bytes, HEAD,
// validators, ranges, directories, refusals; nothing outside the root is
// ever sent, however the path is spelled or linked; a large body is sent
// under the output cap to a client that reads slowly; a file truncated or
// replaced while it is being sent ends or stays whole, never padded.
#include "serve_test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <utility>

using namespace serve_test;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMarker = "uringkit-secret-5be1d0";

std::string random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(gen());
    return s;
}

void write_file(const fs::path& p, std::string_view bytes) {
    std::ofstream(p, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string header(const Response& r, std::string_view name) {
    const std::string key = "\r\n" + std::string(name) + ": ";
    const auto at = r.head.find(key);
    if (at == std::string::npos) return "";
    const auto end = r.head.find("\r\n", at + key.size());
    return r.head.substr(at + key.size(), end - at - key.size());
}

// Every engine, the uring engine with each place for its file operations
// (--file-io): system calls, or the ring, and with each body path
// (--body-path): by size (auto), read, splice; the epoll engine with each:
// by size, sendfile, read.
struct FileCase {
    net::EngineKind engine;
    net::FileIo file_io;
    net::BodyPath body_path = net::BodyPath::Auto;
};
std::vector<FileCase> file_cases() {
    std::vector<FileCase> cases;
    for (const net::EngineKind e : engines()) {
        if (e == net::EngineKind::Uring) {
            for (const net::FileIo io :
                 {net::FileIo::Ring, net::FileIo::RingStatx, net::FileIo::Calls})
                cases.push_back({e, io});
            cases.push_back({e, net::FileIo::Ring, net::BodyPath::Read});
            cases.push_back({e, net::FileIo::Ring, net::BodyPath::Splice});
        } else if (e == net::EngineKind::Epoll) {
            for (const net::BodyPath b :
                 {net::BodyPath::Auto, net::BodyPath::Sendfile, net::BodyPath::Read})
                cases.push_back({e, net::FileIo::Calls, b});
        } else {
            cases.push_back({e, net::FileIo::Calls});
        }
    }
    return cases;
}
std::string file_case_name(const testing::TestParamInfo<FileCase>& info) {
    std::string n(net::engine_name(info.param.engine));
    if (info.param.engine == net::EngineKind::Uring)
        n += info.param.file_io == net::FileIo::Ring        ? "_ring"
             : info.param.file_io == net::FileIo::RingStatx ? "_ring_statx"
                                                            : "_calls";
    n += info.param.body_path == net::BodyPath::Splice     ? "_splice"
         : info.param.body_path == net::BodyPath::Sendfile ? "_sendfile"
         : info.param.body_path == net::BodyPath::Read     ? "_read"
                                                           : "";
    for (char& c : n)
        if (c == '-') c = '_';
    return n;
}

// Open descriptors of this process.
std::size_t open_fds() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
    return n;
}

// Polls `done` until it holds or `limit` passes: for the server's counters,
// which it may update after the client has seen the bytes they count.
template <class Pred>
void wait_until(Pred done, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// The process's descriptor table full but for one slot, under a lowered
// RLIMIT_NOFILE (so filling it is quick); both given back at the end of
// the scope, whatever assertion ends the test.
class OneDescriptorLeft {
public:
    explicit OneDescriptorLeft(int like) {
        lowered_ = ok_ = ::getrlimit(RLIMIT_NOFILE, &old_) == 0;
        rlimit low = old_;
        low.rlim_cur = std::min<rlim_t>(old_.rlim_cur, open_fds() + 64);
        ok_ = ok_ && ::setrlimit(RLIMIT_NOFILE, &low) == 0;
        for (int fd; ok_ && (fd = ::dup(like)) >= 0;) fillers_.push_back(fd);
        ok_ = ok_ && errno == EMFILE && !fillers_.empty();
        if (ok_) {
            ::close(fillers_.back());
            fillers_.pop_back();
        }
    }
    ~OneDescriptorLeft() { release(); }
    OneDescriptorLeft(const OneDescriptorLeft&) = delete;
    OneDescriptorLeft& operator=(const OneDescriptorLeft&) = delete;
    bool ok() const noexcept { return ok_; }
    void release() noexcept {
        for (const int fd : fillers_) ::close(fd);
        fillers_.clear();
        if (std::exchange(lowered_, false)) ::setrlimit(RLIMIT_NOFILE, &old_);
    }

private:
    rlimit old_{};
    std::vector<int> fillers_;
    bool lowered_ = false;  // old_ is to be given back
    bool ok_ = false;
};

class ServeFiles : public testing::TestWithParam<FileCase> {
protected:
    net::ServerConfig config() const {
        net::ServerConfig c;
        c.engine = GetParam().engine;
        c.file_io = GetParam().file_io;
        c.body_path = GetParam().body_path;
        c.grace = std::chrono::milliseconds(500);
        return c;
    }

    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-serve-files-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        base_ = tmpl;
        root_ = base_ / "root";
        fs::create_directories(root_ / "sub");
        fs::create_directories(root_ / "empty");
        write_file(base_ / "secret", kMarker);
        write_file(root_ / "a.txt", "hello, file\n");
        write_file(root_ / "sub" / "index.html", "<h1>index</h1>\n");
        fs::create_symlink(base_ / "secret", root_ / "abs");
        fs::create_symlink("../secret", root_ / "rel");
        fs::create_symlink("/proc/self/root", root_ / "magic");
        fs::create_symlink("a.txt", root_ / "inner");
        ASSERT_EQ(::mkfifo((root_ / "fifo").c_str(), 0644), 0);
    }
    void TearDown() override { fs::remove_all(base_); }

    net::ServerConfig files_config() const {
        net::ServerConfig c = config();
        c.root = root_.string();
        return c;
    }
    // A small output cap, for clients with a small receive window
    // (kSlowWindow): a large body is in flight far longer than the cap.
    net::ServerConfig capped_config() const {
        net::ServerConfig c = files_config();
        c.max_pending = 64 * 1024;
        return c;
    }
    static constexpr int kSlowWindow = 16 * 1024;
    static Response get(TestServer& srv, const std::string& target, const std::string& extra = "",
                        const std::string& method = "GET") {
        Socket s(srv.port());
        EXPECT_TRUE(s.send(method + " " + target + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n"));
        std::string carry;
        Response r = read_response(s, carry);
        if (method == "HEAD") r.body.clear();
        return r;
    }

    fs::path base_, root_;
};

TEST_P(ServeFiles, FilesHeadValidatorsAndRanges) {
    TestServer srv(files_config());
    const Response r = get(srv, "/a.txt");
    ASSERT_EQ(r.status, 200) << r.head;
    EXPECT_EQ(r.body, "hello, file\n");
    EXPECT_EQ(header(r, "Content-Length"), "12");
    EXPECT_EQ(header(r, "Accept-Ranges"), "bytes");
    EXPECT_FALSE(header(r, "Last-Modified").empty());
    EXPECT_FALSE(header(r, "Date").empty());
    if (fs::exists("/etc/mime.types")) {
        EXPECT_EQ(header(r, "Content-Type"), "text/plain");
    }
    const std::string etag = header(r, "ETag");
    ASSERT_FALSE(etag.empty());

    Socket s(srv.port());
    ASSERT_TRUE(
        s.send("HEAD /a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string carry;
    Response head;
    // HEAD's Content-Length names the body it does not send: read the head only.
    while (carry.find("\r\n\r\n") == std::string::npos) {
        char buf[4096];
        const ssize_t n = recv_retrying(s.fd, buf, sizeof buf);
        ASSERT_GT(n, 0);
        carry.append(buf, static_cast<std::size_t>(n));
    }
    const auto end = carry.find("\r\n\r\n");
    EXPECT_NE(carry.substr(0, end).find("Content-Length: 12"), std::string::npos);
    carry.erase(0, end + 4);
    EXPECT_EQ(read_response(s, carry).body, "hello, file\n") << "HEAD sent no body";

    EXPECT_EQ(get(srv, "/a.txt", "If-None-Match: " + etag + "\r\n").status, 304);
    EXPECT_EQ(
        get(srv, "/a.txt", "If-Modified-Since: " + header(r, "Last-Modified") + "\r\n").status,
        304);
    const Response part = get(srv, "/a.txt", "Range: bytes=7-10\r\n");
    EXPECT_EQ(part.status, 206);
    EXPECT_EQ(part.body, "file");
    EXPECT_EQ(header(part, "Content-Range"), "bytes 7-10/12");
    const Response past = get(srv, "/a.txt", "Range: bytes=100-\r\n");
    EXPECT_EQ(past.status, 416);
    EXPECT_EQ(header(past, "Content-Range"), "bytes */12");
    EXPECT_EQ(get(srv, "/a.txt", "Range: bytes=0-1,4-5\r\n").body, "hello, file\n");
    EXPECT_EQ(get(srv, "/a.txt", "Range: bytes=0-1\r\nIf-Range: \"other\"\r\n").status, 200);
}

TEST_P(ServeFiles, DirectoriesAndRefusals) {
    TestServer srv(files_config());
    const Response redirect = get(srv, "/sub?x=1");
    EXPECT_EQ(redirect.status, 301);
    EXPECT_EQ(header(redirect, "Location"), "/sub/?x=1");
    EXPECT_EQ(get(srv, "/sub/").body, "<h1>index</h1>\n");
    if (fs::exists("/etc/mime.types")) {
        EXPECT_EQ(header(get(srv, "/sub/"), "Content-Type"), "text/html");
    }
    EXPECT_EQ(get(srv, "/empty/").status, 404) << "no listings";
    EXPECT_EQ(get(srv, "/missing").status, 404);
    const Response post = get(srv, "/a.txt", "Content-Length: 0\r\n", "POST");
    EXPECT_EQ(post.status, 405);
    EXPECT_EQ(header(post, "Allow"), "GET, HEAD");
    EXPECT_EQ(get(srv, "/a.txt%00").status, 400);
    // A FIFO opens without blocking and is never read: the server answers
    // at once, and goes on answering.
    EXPECT_EQ(get(srv, "/fifo").status, 403);
    EXPECT_EQ(get(srv, "/a.txt").status, 200);
    EXPECT_EQ(get(srv, "/inner").body, "hello, file\n") << "a link that stays inside";
}

TEST_P(ServeFiles, NothingOutsideTheRootIsEverSent) {
    for (const bool strict : {false, true}) {
        net::ServerConfig c = files_config();
        c.resolve.no_symlinks = c.resolve.no_xdev = strict;
        TestServer srv(c);
        for (const char* t :
             {"/..", "/../secret", "/%2e%2e/secret", "/%2E%2E/secret", "/%2f..%2fsecret",
              "/..%2fsecret", "/sub/../../secret", "/abs", "/rel", "/magic", "/magic/etc/passwd",
              "/magic"
              "/tmp",
              "//etc/passwd", "/%2Fetc/passwd", "/secret%00", "http://x/../secret"}) {
            Socket s(srv.port());
            ASSERT_TRUE(s.send(std::string("GET ") + t +
                               " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
            const std::string all = s.read_all();
            EXPECT_EQ(all.find(kMarker), std::string::npos) << t;
            EXPECT_EQ(all.find("root:"), std::string::npos) << t;
            EXPECT_TRUE(all.starts_with("HTTP/1.1 4")) << t << ": " << all.substr(0, 40);
        }
        EXPECT_EQ(get(srv, "/inner").status, strict ? 404 : 200);
    }
}

// A body much larger than the output cap, to a client that does not read
// for a while: the server holds at most the cap (+ one head), then sends
// the rest as it is taken, exactly, and the pipelined request after it.
TEST_P(ServeFiles, LargeBodyUnderTheCapThenPipelined) {
    const std::string big = random_bytes(3 << 20, 7);
    write_file(root_ / "big.bin", big);
    net::ServerConfig c = capped_config();
    TestServer srv(c);
    Socket s(srv.port(), std::chrono::seconds(10), kSlowWindow);
    ASSERT_TRUE(
        s.send("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_LE(srv.server().stats().pending_peak, c.max_pending + 1024);
    std::string carry;
    const Response r = read_response(s, carry);
    ASSERT_EQ(r.status, 200);
    EXPECT_TRUE(r.body == big) << "body differs (" << r.body.size() << " bytes)";
    EXPECT_EQ(read_response(s, carry).body, "hello, file\n");
    EXPECT_TRUE(s.closed_by_peer());
}

// The body takes the path the engine was given: sendfile and splice move
// it from the page cache to the socket (counted in bytes_spliced), so it
// never passes through the connection's output, which holds heads only.
// By size (auto), a body under ServerConfig::body_send_from is read, and a
// larger one sent by the kernel where the engine can.
TEST_P(ServeFiles, TheBodyTakesTheEnginesPath) {
    const FileCase& p = GetParam();
    const bool kernel_moves =
        p.engine == net::EngineKind::Epoll ||
        (p.engine == net::EngineKind::Uring && p.file_io != net::FileIo::Calls);
    for (const std::size_t size : {std::size_t{4} << 20, std::size_t{16} << 10}) {
        SCOPED_TRACE(size);
        const std::string body = random_bytes(size, 9);
        write_file(root_ / "body.bin", body);
        net::ServerConfig c = files_config();
        ASSERT_GT(c.body_send_from, 16u << 10);
        ASSERT_LT(c.body_send_from, 4u << 20);
        TestServer srv(c);
        const Response r = get(srv, "/body.bin");
        ASSERT_EQ(r.status, 200);
        EXPECT_TRUE(r.body == body) << "body differs (" << r.body.size() << " bytes)";
        const bool sent_by_kernel =
            p.body_path == net::BodyPath::Sendfile || p.body_path == net::BodyPath::Splice ||
            (p.body_path == net::BodyPath::Auto && kernel_moves && size >= c.body_send_from);
        // The client can hold the last byte before the server has reaped the
        // completion that counts it: wait for the count, briefly.
        const std::size_t want = sent_by_kernel ? size : 0u;
        wait_until([&] { return srv.server().stats().bytes_spliced == want; });
        EXPECT_EQ(srv.server().stats().bytes_spliced, want);
        if (sent_by_kernel) {
            EXPECT_LT(srv.server().stats().pending_peak, 4096u)
                << "the body went through the output";
        }
    }
}

// At the descriptor limit the uring engine cannot make the pipe a splice
// needs: the body is read instead, and the client still gets all of it.
// The process is filled with descriptors up to one free, which the file's
// open takes; pipe2 then fails with EMFILE.
TEST_P(ServeFiles, NoPipeForASpliceMeansTheBodyIsRead) {
    const FileCase& p = GetParam();
    if (p.engine != net::EngineKind::Uring || p.file_io == net::FileIo::Calls ||
        p.body_path == net::BodyPath::Read)
        GTEST_SKIP() << "only the uring engine splices through a pipe";
    const std::string body = random_bytes(std::size_t{2} << 20, 21);
    write_file(root_ / "big.bin", body);
    TestServer srv(files_config());
    Socket s(srv.port());
    std::string carry;
    // A first answer on the connection: it is accepted before the limit bites.
    ASSERT_TRUE(s.send("GET /none HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(read_response(s, carry).status, 404);

    OneDescriptorLeft full(s.fd);
    ASSERT_TRUE(full.ok()) << "could not fill the descriptor table";
    ASSERT_TRUE(s.send("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"));
    const Response r = read_response(s, carry);
    full.release();
    ASSERT_EQ(r.status, 200);
    EXPECT_TRUE(r.body == body) << "body differs (" << r.body.size() << " bytes)";
    EXPECT_EQ(srv.server().stats().bytes_spliced, 0u);
    EXPECT_EQ(srv.server().stats().body_read_fallbacks, 1u);
    // With descriptors to spare again the connection goes on.
    ASSERT_TRUE(s.send("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_TRUE(read_response(s, carry).body == body);
}

// A client that asks for a large file and never reads holds its slot for
// --send-timeout, not forever, and at most its cap of output.
TEST_P(ServeFiles, AClientThatNeverReadsIsClosedAtTheSendTimeout) {
    write_file(root_ / "big.bin", random_bytes(16 << 20, 5));
    net::ServerConfig c = capped_config();
    c.send_timeout = std::chrono::milliseconds(300);
    TestServer srv(c);
    Socket s(srv.port(), std::chrono::seconds(10), kSlowWindow);
    ASSERT_TRUE(s.send("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"));
    wait_until([&] { return srv.server().stats().send_timeouts != 0; });
    EXPECT_EQ(srv.server().stats().send_timeouts, 1u);
    EXPECT_LE(srv.server().stats().pending_peak, c.max_pending + 1024);
    // Closed by the server while the client still reads nothing: a splice
    // asleep on the full socket is interrupted, not waited for.
    wait_until([&] { return srv.server().stats().active == 0; });
    EXPECT_EQ(srv.server().stats().active, 0u) << "the connection outlived its send timeout";
    bool closed = false;
    const std::string got = s.read_all(&closed);
    EXPECT_TRUE(closed);
    EXPECT_LT(got.size(), std::size_t{16} << 20) << "closed before the whole file was sent";
}

// Truncated while it is being sent: the connection ends after the bytes
// the file still has, which are the file's own; never padded.
TEST_P(ServeFiles, TruncatedWhileSendingEndsTheConnection) {
    const std::string big = random_bytes(24 << 20, 11);
    write_file(root_ / "shrinks.bin", big);
    net::ServerConfig c = capped_config();
    TestServer srv(c);
    Socket s(srv.port(), std::chrono::seconds(20), kSlowWindow);
    ASSERT_TRUE(s.send("GET /shrinks.bin HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string got = s.read_n(100 * 1024);
    constexpr std::size_t kLeft = 12 << 20;
    ASSERT_EQ(::truncate((root_ / "shrinks.bin").c_str(), kLeft), 0);
    bool closed = false;
    got += s.read_all(&closed);
    EXPECT_TRUE(closed);
    const auto end = got.find("\r\n\r\n");
    ASSERT_NE(end, std::string::npos);
    EXPECT_NE(got.substr(0, end).find("Content-Length: " + std::to_string(big.size())),
              std::string::npos);
    const std::string body = got.substr(end + 4);
    EXPECT_EQ(body.size(), kLeft);
    EXPECT_TRUE(body == big.substr(0, body.size())) << "the bytes sent are the file's";
}

// Replaced by rename while it is being sent: the response is the old file,
// whole; the next request gets the new one.
TEST_P(ServeFiles, ReplacedByRenameIsSentWhole) {
    const std::string v1 = random_bytes(8 << 20, 1), v2 = random_bytes(5 << 20, 2);
    write_file(root_ / "page.bin", v1);
    write_file(base_ / "page.new", v2);
    net::ServerConfig c = capped_config();
    TestServer srv(c);
    Socket s(srv.port(), std::chrono::seconds(20), kSlowWindow);
    ASSERT_TRUE(s.send("GET /page.bin HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string carry = s.read_n(64 * 1024);
    fs::rename(base_ / "page.new", root_ / "page.bin");
    const Response old = read_response(s, carry);
    ASSERT_EQ(old.status, 200);
    EXPECT_TRUE(old.body == v1) << "the old version, whole";
    EXPECT_TRUE(get(srv, "/page.bin").body == v2);
}

// Every descriptor a response opens is closed, whatever the answer, and
// also when the client goes away while its file is being opened or read
// (a reset): the engine waits for the operation's completion before the
// connection is reused, so nothing the kernel still writes to is freed.
TEST_P(ServeFiles, EveryFileIsClosedEvenWhenTheClientLeaves) {
    write_file(root_ / "big.bin", random_bytes(4 << 20, 3));
    const std::size_t before = open_fds();
    {
        TestServer srv(capped_config());
        const char* const targets[] = {"/a.txt",   "/sub/", "/sub",     "/empty/", "/fifo",
                                       "/missing", "/abs",  "/big.bin", "/inner"};
        Socket s(srv.port());
        std::string req;
        for (const char* t : targets)
            req += std::string("HEAD ") + t + " HTTP/1.1\r\nHost: x\r\n\r\n";
        req += "GET /a.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=99-\r\n\r\n";
        req += "GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        ASSERT_TRUE(s.send(req));
        const std::string all = s.read_all();
        EXPECT_NE(all.find("416 "), std::string::npos);
        EXPECT_TRUE(all.ends_with("hello, file\n"))
            << all.substr(all.size() > 200 ? all.size() - 200 : 0);
        for (int i = 0; i < 40; ++i) {
            Socket gone(srv.port(), std::chrono::seconds(10), kSlowWindow);
            ASSERT_TRUE(gone.send(i % 2 ? "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"
                                        : "GET /sub/ HTTP/1.1\r\nHost: x\r\n\r\n"
                                          "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"));
            if (i % 4 == 1) (void)gone.read_n(32 * 1024);
            const linger reset{1, 0};
            ::setsockopt(gone.fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        }
        EXPECT_EQ(get(srv, "/a.txt").body, "hello, file\n") << "still serving";
    }
    EXPECT_EQ(open_fds(), before) << "a descriptor outlived the server";
}

INSTANTIATE_TEST_SUITE_P(Engines, ServeFiles, testing::ValuesIn(file_cases()), file_case_name);

}  // namespace
