#include "load/request.hpp"

#include "load/load.hpp"
#include "net/http_text.hpp"

#include <fmt/format.h>

namespace uringkit::load {
namespace {

// The text as the user typed it, with controls written out, for a message.
std::string shown(std::string_view s) {
    std::string out = "'";
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\r')
            out += "\\r";
        else if (c == '\n')
            out += "\\n";
        else if (c < 0x20 || c == 0x7f)
            out += fmt::format("\\x{:02x}", c);
        else
            out += ch;
    }
    return out + "'";
}

}  // namespace

std::pair<std::string, std::string> parse_header(std::string_view text) {
    for (char ch : text)
        if (ch == '\r' || ch == '\n' || ch == '\0')
            throw RequestError(fmt::format(
                "--header {}: a header field may not hold CR, LF or NUL (one field per -H)",
                shown(text)));
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos)
        throw RequestError(fmt::format(
            "--header {}: no ':'; write 'Name: value', like -H 'Accept: text/html'", shown(text)));
    const std::string_view name = text.substr(0, colon);
    if (name.empty())
        throw RequestError(fmt::format("--header {}: no field name before the ':'", shown(text)));
    for (char ch : name)
        if (!net::detail::is_tchar(static_cast<unsigned char>(ch)))
            throw RequestError(
                fmt::format("--header {}: the field name {} holds {} (letters, digits and "
                            "!#$%&'*+-.^_`|~ only)",
                            shown(text), shown(name), shown(std::string_view(&ch, 1))));
    const std::string_view value = net::detail::trim(text.substr(colon + 1));
    for (char ch : value)
        if (!net::detail::is_value_char(static_cast<unsigned char>(ch)))
            throw RequestError(fmt::format("--header {}: the value holds the control character {}",
                                           shown(text), shown(std::string_view(&ch, 1))));
    if (net::detail::iequals(name, "Content-Length"))
        throw RequestError(
            fmt::format("--header {}: load sets Content-Length from --body; give the body instead",
                        shown(text)));
    if (net::detail::iequals(name, "Transfer-Encoding"))
        throw RequestError(fmt::format(
            "--header {}: load sends bodies with a Content-Length, not a transfer coding",
            shown(text)));
    return {std::string(name), std::string(value)};
}

void check_method(std::string_view method) {
    if (method.empty()) throw RequestError("--method '': give a method, like GET or POST");
    for (char ch : method)
        if (!net::detail::is_tchar(static_cast<unsigned char>(ch)))
            throw RequestError(fmt::format(
                "--method {}: not a method token (letters, digits and !#$%&'*+-.^_`|~ only)",
                shown(method)));
    if (method == "CONNECT")
        throw RequestError(
            "--method CONNECT: it opens a tunnel instead of getting a response to measure; "
            "use GET, HEAD, POST or another method");
}

std::string http_request(const LoadConfig& c) {
    return http_request(c, c.target.path);
}

std::string http_request(const LoadConfig& c, std::string_view path) {
    std::string r = fmt::format("{} {} HTTP/1.1\r\n", c.method, path);
    bool host = false;
    for (const auto& [name, value] : c.headers) host = host || net::detail::iequals(name, "Host");
    if (!host) r += fmt::format("Host: {}\r\n", c.target.host_header());
    for (const auto& [name, value] : c.headers) r += fmt::format("{}: {}\r\n", name, value);
    if (c.body) r += fmt::format("Content-Length: {}\r\n", c.body->size());
    r += "\r\n";
    if (c.body) r += *c.body;
    return r;
}

}  // namespace uringkit::load
