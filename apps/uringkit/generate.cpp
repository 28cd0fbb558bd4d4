// The man pages and shell completions, written from the same CLI11 option
// definitions the parser uses (the build runs `uringkit --generate-docs`).
#include "manual.hpp"
#include "uringkit/version.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>

namespace uringkit::cli {
namespace {

// Text for roff: a backslash and a minus written as roff wants them, and
// a line that would start with a control character made literal.
std::string roff(std::string_view text) {
    std::string out;
    bool line_start = true;
    for (const char c : text) {
        if (line_start && (c == '.' || c == '\'')) out += "\\&";
        if (c == '\\')
            out += "\\e";
        else if (c == '-')
            out += "\\-";
        else
            out += c;
        line_start = c == '\n';
    }
    return out;
}

// Paragraphs separated by blank lines, each a .PP.
std::string paragraphs(std::string_view text) {
    std::string out;
    while (!text.empty()) {
        const auto end = text.find("\n\n");
        std::string_view para = text.substr(0, end);
        out += ".PP\n" + roff(para) + "\n";
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 2);
    }
    return out;
}

std::string page_name(const CLI::App* app) {
    std::string name = full_name(app);
    std::replace(name.begin(), name.end(), ' ', '-');
    return name;
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// The option's synopsis with its names bold and its value italic.
std::string roff_synopsis(const CLI::Option* opt) {
    const std::string s = option_synopsis(opt);
    const auto value = s.find_first_of(" [");
    if (value == std::string::npos) return "\\fB" + roff(s) + "\\fR";
    std::string names = s.substr(0, value), rest = s.substr(value);
    return "\\fB" + roff(names) + "\\fR\\fI" + roff(rest) + "\\fR";
}

std::string man_page(const CLI::App* app, const std::string& date) {
    const Manual* m = manual_of(app);
    const std::string name = page_name(app);
    std::string out = fmt::format(".TH \"{}\" 1 \"{}\" \"uringkit {}\" \"User Commands\"\n",
                                  upper(name), date, uringkit::version_string);
    out += ".SH NAME\n" + roff(name) + " \\- " + roff(app->get_description()) + "\n";
    out += ".SH SYNOPSIS\n.B " + roff(full_name(app)) + "\n";
    if (app->get_parent() == nullptr) {
        out += "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
    } else {
        out += "[\\fIOPTIONS\\fR]";
        for (const CLI::Option* opt : app->get_options())
            if (opt->get_positional()) out += " \\fI" + roff(option_synopsis(opt)) + "\\fR";
        out += "\n";
    }
    out += ".SH DESCRIPTION\n";
    out += paragraphs(m && !m->description.empty() ? m->description : app->get_description());
    const auto subs = visible_subcommands(app);
    if (!subs.empty()) {
        out += ".SH COMMANDS\n";
        for (const CLI::App* s : subs)
            out += fmt::format(".TP\n.BR {} (1)\n{}\n", roff(page_name(s)),
                               roff(s->get_description()));
    }
    const auto groups = option_groups(app);
    out += ".SH OPTIONS\n";
    for (const auto& [group, opts] : groups) {
        if (groups.size() > 1) out += ".SS " + roff(group) + "\n";
        for (const CLI::Option* opt : opts)
            out += ".TP\n" + roff_synopsis(opt) + "\n" + roff(option_text(opt, false)) + "\n";
    }
    out += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nPrint the help and exit.\n";
    out += ".TP\n\\fB\\-\\-version\\fR\nPrint the version and exit.\n";
    if (!app->get_footer().empty()) out += ".SH NOTES\n" + paragraphs(app->get_footer());
    if (m && !m->exits.empty()) {
        out += ".SH EXIT STATUS\n";
        for (const ExitStatus& e : m->exits)
            out += fmt::format(".TP\n.B {}\n{}\n", e.status, roff(e.meaning));
    }
    if (m && !m->examples.empty()) {
        out += ".SH EXAMPLES\n";
        for (const Example& e : m->examples)
            out += fmt::format(".TP\n.B {}\n{}\n", roff(e.command), roff(e.what));
    }
    out += ".SH SEE ALSO\n";
    std::string see = app->get_parent() ? "uringkit(1)" : "";
    for (const CLI::App* s : subs) see += (see.empty() ? "" : ", ") + page_name(s) + "(1)";
    if (app->get_parent() == nullptr) see += ", uringkit(7)";
    if (m && !m->see_also.empty()) see += ", " + m->see_also;
    out += roff(see) + "\n";
    if (m && !m->doc.empty())
        out += fmt::format(".PP\nMeasured figures and the long form: \\fI{}/{}\\fR\n",
                           roff(doc_dir()), roff(m->doc));
    return out;
}

// How a shell completes an option's value.
struct ValueKind {
    enum { none, file, dir, words } kind = none;
    std::vector<std::string> words_;
};

ValueKind value_kind(const CLI::Option* opt) {
    ValueKind k;
    if (auto words = completion_values(opt); !words.empty()) {
        k.kind = ValueKind::words;
        k.words_ = std::move(words);
        return k;
    }
    const std::string s = option_synopsis(opt);
    if (s.find("DIR") != std::string::npos)
        k.kind = ValueKind::dir;
    else if (s.find("FILE") != std::string::npos || s.find("PATH") != std::string::npos ||
             s.find("SRC") != std::string::npos || s.find("TRACE") != std::string::npos)
        k.kind = ValueKind::file;
    return k;
}

std::vector<std::string> option_names(const CLI::Option* opt) {
    std::vector<std::string> names;
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    return names;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
}

// The apps a completion knows, each with its words: the top level and every
// subcommand, depth first.
void collect(const CLI::App* app, std::vector<const CLI::App*>& out) {
    out.push_back(app);
    for (const CLI::App* s : visible_subcommands(app)) collect(s, out);
}

// A command as the completions name it: "" for uringkit itself, "bench net".
std::string command_key(const CLI::App* app) {
    if (!app->get_parent()) return "";
    const std::string name = full_name(app);
    return name.substr(name.find(' ') + 1);
}

// The shell `case` arms that follow the words typed so far from one command
// to its subcommand: "$cmd:$word" -> the new command.  Shared by bash and zsh.
std::string command_cases(const std::vector<const CLI::App*>& apps) {
    std::string out;
    for (const CLI::App* a : apps)
        if (a->get_parent())
            out += fmt::format("            '{}:{}') cmd='{}' ;;\n", command_key(a->get_parent()),
                               a->get_name(), command_key(a));
    return out;
}

std::string bash_completion(const CLI::App& top) {
    std::vector<const CLI::App*> apps;
    collect(&top, apps);
    std::string out =
        "# bash completion for uringkit, written from its option definitions.\n"
        "_uringkit() {\n"
        "    local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= i w\n"
        "    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
        "    # --opt=VALUE arrives as three words: --opt, =, VALUE.\n"
        "    if [[ $cur == = ]]; then prev=${COMP_WORDS[COMP_CWORD-1]}; cur=;\n"
        "    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then prev=${COMP_WORDS[COMP_CWORD-2]}; "
        "fi\n"
        "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "        w=${COMP_WORDS[i]}\n"
        "        case \"$cmd:$w\" in\n";
    out += command_cases(apps);
    out +=
        "        esac\n"
        "    done\n"
        "    COMPREPLY=()\n"
        "    case \"$cmd\" in\n";
    for (const CLI::App* a : apps) {
        const std::string key = command_key(a);
        out += fmt::format("    '{}')\n        case \"$prev\" in\n", key);
        std::vector<std::string> flags, subs;
        bool positional_files = false;
        for (const CLI::Option* opt : a->get_options()) {
            if (opt == a->get_help_ptr()) continue;
            if (opt->get_positional()) {
                positional_files = positional_files || value_kind(opt).kind != ValueKind::none;
                continue;
            }
            const auto names = option_names(opt);
            flags.insert(flags.end(), names.begin(), names.end());
            if (opt->get_type_size_max() == 0 ||
                option_synopsis(opt).find("[=") != std::string::npos)
                continue;
            const ValueKind k = value_kind(opt);
            std::string action = "return ;;";
            if (k.kind == ValueKind::file)
                action = "compopt -o filenames; COMPREPLY=($(compgen -f -- \"$cur\")); return ;;";
            else if (k.kind == ValueKind::dir)
                action = "compopt -o filenames; COMPREPLY=($(compgen -d -- \"$cur\")); return ;;";
            else if (k.kind == ValueKind::words)
                action = fmt::format(
                    "local pre=; [[ $cur == *,* ]] && pre=${{cur%,*}},; "
                    "COMPREPLY=($(compgen -P \"$pre\" -W '{}' -- \"${{cur##*,}}\")); return ;;",
                    join(k.words_, " "));
            out += fmt::format("            {}) {}\n", join(names, "|"), action);
        }
        flags.push_back("--help");
        flags.push_back("--version");
        for (const CLI::App* s : visible_subcommands(a)) subs.push_back(s->get_name());
        out += "        esac\n";
        out += fmt::format(
            "        if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W '{}' -- \"$cur\"))\n",
            join(flags, " "));
        if (!subs.empty())
            out += fmt::format("        else COMPREPLY=($(compgen -W '{}' -- \"$cur\"))\n",
                               join(subs, " "));
        else if (positional_files)
            out += "        else compopt -o filenames; COMPREPLY=($(compgen -f -- \"$cur\"))\n";
        out += "        fi ;;\n";
    }
    out +=
        "    esac\n"
        "}\n"
        "complete -F _uringkit uringkit\n";
    return out;
}

// A description for zsh's _arguments: its first sentence, without the
// characters that end or split an item.
std::string zsh_text(std::string_view text) {
    std::string out;
    for (const char c : text.substr(0, text.find(". "))) {
        if (c == '[' || c == ']')
            out += c == '[' ? '(' : ')';
        else if (c == '\'')
            out += "'\\''";
        else if (c == ':' || c == '\\')
            out += ' ';
        else if (c != '\n')
            out += c;
    }
    if (out.size() > 70) out = out.substr(0, 67) + "...";
    return out;
}

std::string zsh_completion(const CLI::App& top) {
    std::vector<const CLI::App*> apps;
    collect(&top, apps);
    std::string out =
        "#compdef uringkit\n"
        "# zsh completion for uringkit, written from its option definitions.\n"
        "_uringkit() {\n"
        "    local cmd= w\n"
        "    for w in ${words[2,CURRENT-1]}; do\n"
        "        case \"$cmd:$w\" in\n";
    out += command_cases(apps);
    out += "        esac\n    done\n    case \"$cmd\" in\n";
    for (const CLI::App* a : apps) {
        const std::string key = command_key(a);
        out += fmt::format("    '{}')\n        _arguments -s", key);
        bool positional_files = false;
        for (const CLI::Option* opt : a->get_options()) {
            if (opt == a->get_help_ptr()) continue;
            if (opt->get_positional()) {
                positional_files = positional_files || value_kind(opt).kind != ValueKind::none;
                continue;
            }
            std::string value;
            if (opt->get_type_size_max() > 0 &&
                option_synopsis(opt).find("[=") == std::string::npos) {
                const ValueKind k = value_kind(opt);
                value = k.kind == ValueKind::file    ? ":file:_files"
                        : k.kind == ValueKind::dir   ? ":directory:_files -/"
                        : k.kind == ValueKind::words ? ":value:(" + join(k.words_, " ") + ")"
                                                     : ":value: ";
            }
            for (const std::string& n : option_names(opt))
                out += fmt::format(" \\\n            '{}[{}]{}'", n,
                                   zsh_text(opt->get_description()), value);
        }
        out += " \\\n            '(- *)--help[Print the help and exit]'";
        const auto subs = visible_subcommands(a);
        if (!subs.empty()) {
            std::vector<std::string> names;
            for (const CLI::App* s : subs) names.push_back(s->get_name());
            out += fmt::format(" \\\n            '1:command:({})'", join(names, " "));
        } else if (positional_files) {
            out += " \\\n            '*:file:_files'";
        }
        out += " ;;\n";
    }
    out += "    esac\n}\n_uringkit \"$@\"\n";
    return out;
}

bool write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::trunc);
    f << text;
    f.close();
    if (!f) {
        std::fprintf(stderr, "uringkit --generate-docs: cannot write %s: %s\n", path.c_str(),
                     std::strerror(errno));
        return false;
    }
    return true;
}

}  // namespace

bool generate_docs(const CLI::App& app, const std::string& dir, const std::string& date) {
    std::vector<const CLI::App*> apps;
    collect(&app, apps);
    bool ok = true;
    for (const CLI::App* a : apps)
        ok = write_file(dir + "/" + page_name(a) + ".1", man_page(a, date)) && ok;
    ok = write_file(dir + "/uringkit.bash", bash_completion(app)) && ok;
    ok = write_file(dir + "/_uringkit", zsh_completion(app)) && ok;
    return ok;
}

}  // namespace uringkit::cli
