#include "manual.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>
#include <string_view>

#ifndef URINGKIT_DOC_DIR
#define URINGKIT_DOC_DIR "/usr/local/share/doc/uringkit"
#endif

namespace uringkit::cli {
namespace {

std::map<const CLI::App*, Manual>& manuals() {
    static std::map<const CLI::App*, Manual> m;
    return m;
}

// CLI11's type names ("TEXT", "UINT:UINT in [1 - 1024]") in plain words:
// the value's kind, never the C++ type or the validator's syntax.  Where
// the name of the option says what the value is, that wins.
std::string metavar(const CLI::Option* opt) {
    std::string type = opt->get_type_name();
    if (type.rfind("[=", 0) == 0) return type;  // a flag's optional value, written as it is
    std::string choices;
    if (const auto colon = type.find(':'); colon != std::string::npos) {
        const std::string validators = type.substr(colon + 1);
        if (validators.size() > 2 && validators.front() == '{' && validators.back() == '}') {
            choices = validators.substr(1, validators.size() - 2);
            std::replace(choices.begin(), choices.end(), ',', '|');
        }
        type.resize(colon);
    }
    if (!choices.empty()) return choices;
    const bool many = type.find("...") != std::string::npos || opt->get_expected_max() > 1;
    if (const auto space = type.find(' '); space != std::string::npos) type.resize(space);
    static const std::map<std::string_view, std::string_view> by_kind{
        {"TEXT", "VALUE"}, {"UINT", "N"}, {"INT", "N"}, {"FLOAT", "NUMBER"}, {"NUMBER", "NUMBER"}};
    if (const auto it = by_kind.find(type); it != by_kind.end()) type = it->second;
    return many ? type + "..." : type;
}

// The words of `text`, refilled to `width` columns after `indent` spaces
// (the first line's indent is already written by the caller).
std::string wrap(std::string_view text, std::size_t indent, std::size_t width, std::size_t used) {
    std::string out;
    std::size_t col = used;
    bool first = true;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '\n') {
            out += '\n' + std::string(indent, ' ');
            col = indent;
            first = true;
            ++i;
            continue;
        }
        if (text[i] == ' ') {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\n') ++j;
        const std::string_view word = text.substr(i, j - i);
        if (!first && col + 1 + word.size() > width) {
            out += '\n' + std::string(indent, ' ');
            col = indent;
            first = true;
        }
        if (!first) {
            out += ' ';
            ++col;
        }
        out += word;
        col += word.size();
        first = false;
        i = j;
    }
    return out;
}

std::size_t terminal_width() {
    winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        return std::min<std::size_t>(ws.ws_col, 100);
    return 80;
}

}  // namespace

// Each app's groups in the order group_options() named them.
std::map<const CLI::App*, std::vector<std::string>>& group_order() {
    static std::map<const CLI::App*, std::vector<std::string>> m;
    return m;
}

void group_options(CLI::App& app, const std::string& group,
                   std::initializer_list<const char*> names) {
    group_order()[&app].push_back(group);
    for (const char* name : names) {
        CLI::Option* opt = app.get_option_no_throw(name);
        if (!opt) throw std::logic_error(fmt::format("{}: no option {}", app.get_name(), name));
        opt->group(group);
    }
}

void name_values(CLI::App& app, std::initializer_list<std::pair<const char*, const char*>> names) {
    for (const auto& [name, value] : names) {
        CLI::Option* opt = app.get_option_no_throw(name);
        if (!opt) throw std::logic_error(fmt::format("{}: no option {}", app.get_name(), name));
        opt->type_name(value);
    }
}

void describe(const CLI::App& app, Manual m) {
    manuals()[&app] = std::move(m);
}

std::map<const CLI::Option*, std::vector<std::string>>& completions() {
    static std::map<const CLI::Option*, std::vector<std::string>> m;
    return m;
}

void complete_with(const CLI::Option* opt, std::vector<std::string> values) {
    completions()[opt] = std::move(values);
}

std::vector<std::string> completion_values(const CLI::Option* opt) {
    if (const auto it = completions().find(opt); it != completions().end()) return it->second;
    const std::string type = opt->get_type_name();
    std::vector<std::string> values;
    if (const auto open = type.find(":{"); open != std::string::npos && type.back() == '}') {
        std::string_view list(type);
        list = list.substr(open + 2, list.size() - open - 3);
        while (!list.empty()) {
            const auto comma = list.find(',');
            values.emplace_back(list.substr(0, comma));
            list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        }
    }
    return values;
}

const Manual* manual_of(const CLI::App* app) {
    const auto it = manuals().find(app);
    return it == manuals().end() ? nullptr : &it->second;
}

const char* doc_dir() {
    return URINGKIT_DOC_DIR;
}

std::string full_name(const CLI::App* app) {
    std::string name = app->get_name();
    for (const CLI::App* p = app->get_parent(); p; p = p->get_parent())
        name = p->get_name() + " " + name;
    return name;
}

std::string option_synopsis(const CLI::Option* opt) {
    if (opt->get_positional()) {
        const std::string type = opt->get_type_name();
        return type.empty() ? opt->get_name() : type;
    }
    std::string names;
    for (const std::string& s : opt->get_snames()) names += (names.empty() ? "-" : ", -") + s;
    for (const std::string& l : opt->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
    if (opt->get_type_size_max() == 0) return names;  // a flag
    const std::string value = metavar(opt);
    if (value.rfind("[=", 0) == 0) return names + value;
    return value.empty() ? names : names + " " + value;
}

std::string option_text(const CLI::Option* opt, bool brief) {
    std::string text = opt->get_description();
    // The docs are installed: point there rather than into a source tree.
    for (auto at = text.find("docs/"); at != std::string::npos; at = text.find("docs/", at + 1))
        if (at == 0 || text[at - 1] == ' ' || text[at - 1] == '(')
            text.replace(at, 5, std::string(doc_dir()) + "/");
    if (brief) {
        // --help keeps the first sentence; the man page has them all.
        for (std::size_t at = text.find(". "); at != std::string::npos;
             at = text.find(". ", at + 1)) {
            std::size_t next = at + 2;
            while (next < text.size() && text[next] == ' ') ++next;
            if (next < text.size() && std::isupper(static_cast<unsigned char>(text[next]))) {
                text.resize(at);
                break;
            }
        }
    }
    const std::string def = opt->get_default_str();
    if (opt->get_type_size_max() > 0 && !def.empty() && text.find("default") == std::string::npos)
        text += fmt::format(" (default: {})", def);
    return text;
}

std::vector<std::pair<std::string, std::vector<const CLI::Option*>>> option_groups(
    const CLI::App* app) {
    std::vector<std::pair<std::string, std::vector<const CLI::Option*>>> groups;
    for (const CLI::Option* opt : app->get_options()) {
        if (opt->get_group().empty() || opt == app->get_help_ptr()) continue;
        if (opt->get_positional()) continue;
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const auto& g) { return g.first == opt->get_group(); });
        if (it == groups.end()) it = groups.insert(groups.end(), {opt->get_group(), {}});
        it->second.push_back(opt);
    }
    // The groups named by group_options() first, in its order; the rest ("Options") after.
    const auto& order = group_order()[app];
    auto rank = [&](const std::string& g) {
        return std::find(order.begin(), order.end(), g) - order.begin();
    };
    std::stable_sort(groups.begin(), groups.end(),
                     [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
    return groups;
}

std::vector<const CLI::App*> visible_subcommands(const CLI::App* app) {
    return app->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
}

std::string HelpFormatter::make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const {
    const std::size_t width = terminal_width();
    const std::string name = full_name(app);
    std::string out = "Usage: " + name;
    const auto subs = visible_subcommands(app);
    const bool top = app->get_parent() == nullptr;
    if (top) {
        out += " COMMAND [OPTIONS]\n";
    } else {
        out += " [OPTIONS]";
        for (const CLI::Option* opt : app->get_options())
            if (opt->get_positional()) out += " " + option_synopsis(opt);
        if (!subs.empty()) {
            out += "\n       " + name;
            for (const CLI::App* s : subs) out += (s == subs.front() ? " " : "|") + s->get_name();
            out += " [OPTIONS]";
        }
        out += "\n";
    }
    out += wrap(app->get_description(), 0, width, 0) + "\n";
    auto entry = [&](const std::string& left, const std::string& right, std::size_t col = 26) {
        std::string line = "  " + left;
        if (line.size() + 2 > col)
            line += "\n" + std::string(col, ' ');
        else
            line += std::string(col - line.size(), ' ');
        return line + wrap(right, col, width, col) + "\n";
    };
    if (!subs.empty()) {
        out += top ? "\nCommands:\n" : "\nSubcommands:\n";
        for (const CLI::App* s : subs) out += entry(s->get_name(), s->get_description());
    }
    for (const auto& [group, opts] : option_groups(app)) {
        out += "\n" + group + ":\n";
        for (const CLI::Option* opt : opts)
            out += entry(option_synopsis(opt), option_text(opt, true));
    }
    out += entry("-h, --help", "Print this help and exit");
    const Manual* m = manual_of(app);
    if (m && !m->examples.empty()) {
        out += "\nExamples:\n";
        for (const Example& e : m->examples)
            out += "  " + e.command + "\n" + std::string(6, ' ') + wrap(e.what, 6, width, 6) + "\n";
    }
    if (m && !m->exits.empty()) {
        out += "\nExit status:\n";
        for (const ExitStatus& e : m->exits) out += entry(std::to_string(e.status), e.meaning, 8);
    }
    if (!app->get_footer().empty()) out += "\n" + wrap(app->get_footer(), 0, width, 0) + "\n";
    std::string page = name;
    std::replace(page.begin(), page.end(), ' ', '-');
    out += "\nFull manual: man " + page;
    if (m && !m->doc.empty()) out += fmt::format("; figures and details: {}/{}", doc_dir(), m->doc);
    return out + "\n";
}

}  // namespace uringkit::cli
