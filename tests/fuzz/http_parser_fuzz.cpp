// libFuzzer target for the HTTP/1.1 request parser (src/net/http.cpp).
//
//   make fuzz                                  (all targets, 20 s each)
//   make fuzz FUZZ_SECONDS=600                 (longer)
//   build-fuzz/tests/fuzz/http_parser_fuzz /tmp/new tests/fuzz/http_corpus   (by hand)
//
// Built with ASan+UBSan: any read outside the input is a crash.  Beyond
// memory safety it checks what the engines rely on: a complete head lies
// inside the input, its target inside the head, its body under the limit, and
// parsing the head alone gives the same answer (the engines parse from
// wherever the bytes are, with or without what follows).
#include "net/http.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace uringkit::net;
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    HttpLimits limits;
    limits.max_head_bytes = 1024;  // small, so the fuzzer reaches the limit paths
    limits.max_body_bytes = 1000;
    const ParseResult r = parse_request(in, limits);
    if (r.status != ParseStatus::Complete) return 0;
    const HttpRequest& q = r.request;
    if (q.head_bytes == 0 || q.head_bytes > size) std::abort();
    if (q.target.empty() || q.target.data() < in.data() ||
        q.target.data() + q.target.size() > in.data() + q.head_bytes)
        std::abort();
    if (q.content_length > limits.max_body_bytes) std::abort();
    const ParseResult again = parse_request(in.substr(0, q.head_bytes), limits);
    if (again.status != ParseStatus::Complete || again.request.head_bytes != q.head_bytes ||
        again.request.keep_alive != q.keep_alive ||
        again.request.content_length != q.content_length)
        std::abort();
    return 0;
}
