// uringkit: one binary, one file per subcommand (see command.hpp).
#include "command.hpp"
#include "console.hpp"
#include "manual.hpp"
#include "probe/kernel.hpp"
#include "uringkit/version.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::cli {
std::vector<Command>& registry() {
    static std::vector<Command> commands;
    return commands;
}

namespace {
std::vector<std::string>* own_words = nullptr;
}  // namespace

void take_own_arguments(std::vector<std::string>* words) noexcept {
    own_words = words;
}

namespace {

// The command line and the subcommand it chose, for as_typed().
int typed_argc = 0;
char** typed_argv = nullptr;
const CLI::App* typed_app = nullptr;

bool is_name_char(char c) noexcept {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

// Replaces each `from` standing as a word of `text` (not a piece of a longer
// option name) with `to`.
void replace_word(std::string& text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
        const std::size_t end = at + from.size();
        if ((at > 0 && is_name_char(text[at - 1])) ||
            (end < text.size() && is_name_char(text[end]))) {
            at = end;
            continue;
        }
        // "--target-directory (-t)" names both already: leave it.
        if (text.compare(end, to.size() + 3, " (" + to + ")") == 0) {
            at = end;
            continue;
        }
        text.replace(at, from.size(), to);
        at += to.size();
    }
}

// CLI11 and the subcommands name an option by its long name; whoever typed
// only its short one (load -H, -c) is told about the token they typed.
std::string as_typed(std::string message) {
    if (typed_app == nullptr) return message;
    std::vector<const CLI::App*> apps{typed_app};
    for (const CLI::App* nested : typed_app->get_subcommands({})) apps.push_back(nested);
    for (const CLI::App* a : apps)
        for (const CLI::Option* opt : a->get_options()) {
            if (opt->get_snames().size() != 1 || opt->get_lnames().empty()) continue;
            const std::string short_name = "-" + opt->get_snames().front();
            bool typed_short = false, typed_long = false;
            for (int i = 1; i < typed_argc; ++i) {
                const std::string_view arg = typed_argv[i];
                if (arg == "--") break;
                // -H, or -cVALUE
                if (arg.size() >= 2 && arg[1] != '-' && arg.substr(0, 2) == short_name)
                    typed_short = true;
                for (const std::string& l : opt->get_lnames())
                    if (arg == "--" + l || arg.starts_with("--" + l + "=")) typed_long = true;
            }
            if (!typed_short || typed_long) continue;
            for (const std::string& l : opt->get_lnames())
                replace_word(message, "--" + l, short_name);
        }
    return message;
}

}  // namespace

// One style for every parse error: "uringkit CMD: what", then where to look.
int usage_error(const std::string& cmd, std::string message) {
    message = as_typed(std::move(message));
    if (message.size() > 1 && std::isupper(static_cast<unsigned char>(message[0])) &&
        std::islower(static_cast<unsigned char>(message[1])))
        message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
    const std::string who = cmd.empty() ? "uringkit" : "uringkit " + cmd;
    emit(stderr, "{}: {}\nTry '{} --help' for more information.\n", who, message, who);
    return kUsage;
}
}  // namespace uringkit::cli

namespace {

using namespace uringkit::cli;

// kUsage as the command reports it (coreutils' cp: 1).
int as_usage(const Command* c, int status) {
    return status == kUsage && c ? c->usage_status : status;
}

// getopt_long's rule for the commands that ask for it: `--NAME` that is the
// start of exactly one long option of `sub` is that option (an exact name
// wins).  Returns the words with the names written out (empty when none
// changed); an ambiguous start sets `ambiguous` to getopt's message.
std::vector<std::string> expand_abbreviations(const CLI::App& sub, const char* peer_options,
                                              int argc, char** argv, std::string& ambiguous) {
    std::vector<std::string> names;
    for (const CLI::Option* opt : sub.get_options())
        for (const std::string& l : opt->get_lnames()) names.push_back(l);
    std::vector<std::string> words(argv, argv + argc);
    bool changed = false;
    for (std::size_t i = 1; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (w == "--") break;
        if (w.size() < 3 || w.compare(0, 2, "--") != 0) continue;
        const std::size_t eq = w.find('=');
        const std::string name = w.substr(2, eq == std::string::npos ? eq : eq - 2);
        if (std::find(names.begin(), names.end(), name) != names.end()) continue;
        std::vector<std::string> starts;
        for (const std::string& l : names)
            if (l.compare(0, name.size(), name) == 0) starts.push_back(l);
        if (starts.size() > 1) {
            std::vector<std::string> peers;
            const std::string peer_list = std::string(" ") + peer_options + " ";
            for (const std::string& l : starts)
                if (peer_list.find(" " + l + " ") != std::string::npos) peers.push_back(l);
            if (peers.size() == 1) starts = peers;
        }
        if (starts.size() > 1) {
            ambiguous = "option '--" + name + "' is ambiguous; possibilities:";
            for (const std::string& l : starts) ambiguous += " '--" + l + "'";
            return {};
        }
        if (starts.size() == 1) {
            words[i] = "--" + starts.front() + (eq == std::string::npos ? "" : w.substr(eq));
            changed = true;
        }
    }
    return changed ? words : std::vector<std::string>{};
}

// The first argument that is not an option: the subcommand, if any (the
// top level has only --help and --version, which take no value).
std::string_view named_subcommand(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--") return {};
        if (argv[i][0] != '-') return argv[i];
    }
    return {};
}

// "bench net" when bench's own subcommand is named after it.
std::string command_path(int argc, char** argv, std::string_view chosen) {
    std::string path(chosen);
    if (chosen != "bench") return path;
    for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i)
        if (std::string_view(argv[i]) == "net") return path + " net";
    return path;
}

// --help and --version win wherever they stand before a `--`, even where
// an option would have taken them as its value (`bench --replay --help`).
bool asks_for(int argc, char** argv, std::initializer_list<std::string_view> names) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "--") return false;
        if (std::find(names.begin(), names.end(), a) != names.end()) return true;
    }
    return false;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            // A swap of two neighbours ("bnech") is one slip, not two.
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                row[j] = std::min(row[j], diagonal);
            diagonal = up;
        }
    }
    return row[b.size()];
}

// The command nearest to what was typed, when it is near enough to be a slip.
std::string_view nearest_command(std::string_view typed) {
    std::string_view best;
    std::size_t best_distance = 3;
    for (const Command& c : registry()) {
        const std::size_t d = edit_distance(typed, c.name);
        if (d < best_distance || (d == best_distance && best.empty() && d <= typed.size() / 2)) {
            best = c.name;
            best_distance = d;
        }
    }
    return best;
}

Manual top_manual() {
    Manual m;
    m.description =
        "uringkit drives Linux io_uring directly (io_uring_setup, io_uring_enter, "
        "io_uring_register; no liburing inside) and measures it against the system calls it "
        "replaces.\n\n"
        "io_uring wins when many independent I/Os are in flight: one io_uring_enter carries a "
        "whole batch.  For one read that waits on its own result a plain pread is as fast or "
        "faster, and bench says so when it measures that.\n\n"
        "Each command has its own page: uringkit-probe(1), uringkit-bench(1), "
        "uringkit-bench-net(1), uringkit-cp(1), uringkit-readfiles(1), uringkit-xxhsum(1), "
        "uringkit-serve(1), "
        "uringkit-load(1).  The library is described in uringkit(7).";
    m.examples = {
        {"uringkit probe", "What io_uring can do on this machine, each capability tried."},
        {"uringkit bench", "pread, threads, libaio and the io_uring engines on a temporary file."},
        {"uringkit bench --replay trace.txt",
         "Will io_uring help your program? Its own recorded I/O through pread and the ring."},
    };
    m.exits = {
        {0, "done"},
        {1,
         "the job ran and something failed (a file, an engine, an output that could not be "
         "written)"},
        {2, "bad option or argument: nothing was done"},
        {3, "io_uring is not usable here"},
        {4, "a path named on the command line is missing, unreadable or unsuitable"},
        {5, "no space left while writing"},
        {130, "interrupted by SIGINT (SIGTERM: 143); what was done was reported"},
    };
    m.see_also = "fio(1), wrk(1), cp(1), xxhsum(1), io_uring(7)";
    m.doc = "README.md";
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    // Called as `xxhsum` (a link to uringkit): the xxhsum mode, with all of
    // the arguments its own, so `ln -s uringkit xxhsum` serves scripts that
    // run xxhsum.
    std::vector<char*> as_xxhsum;
    const std::string_view called = argv[0] ? argv[0] : "";
    const bool called_xxhsum = called.substr(called.rfind('/') + 1) == "xxhsum";
    if (called_xxhsum) {
        as_xxhsum.assign(argv, argv + argc);
        as_xxhsum.insert(as_xxhsum.begin() + 1, const_cast<char*>("xxhsum"));
        as_xxhsum.push_back(nullptr);
        argv = as_xxhsum.data();
        ++argc;
    }
    CLI::App app{
        "Linux io_uring, measured: probe it, benchmark it against pread, threads and "
        "libaio on your own files, and use it for copying, hashing trees and serving.",
        "uringkit"};
    app.formatter(std::make_shared<HelpFormatter>());
    app.set_help_flag("-h,--help", "Print this help and exit");
    app.set_version_flag("--version", std::string("uringkit ") + uringkit::version_string);
    describe(app, top_manual());
    // An option given twice: the last one wins, as with getopt (coreutils,
    // wrk) and fio (`--size 16m --size 1g` is 1g), instead of CLI11's error.
    // Subcommands inherit it; options that collect (lists, repeatable
    // headers) keep every value.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    auto& commands = registry();
    std::sort(commands.begin(), commands.end(),
              [](const Command& a, const Command& b) { return a.order < b.order; });
    // `uringkit --generate-docs DIR DATE`: the build writes the man pages and
    // completions from every subcommand's options; not for people, so not in --help.
    const bool generating = argc == 4 && std::string_view(argv[1]) == "--generate-docs";
    // Only the subcommand named on the command line gets its options: the
    // others are a name and a summary for `uringkit --help`.  Building every
    // option of every subcommand (CLI11 checks each new name against all the
    // others) was half of the process's own start-up time, and a copy of a
    // small file or a reflink is mostly start-up (cp --version: 1.9 ms
    // against coreutils' 1.2 ms, measured with perf stat -r 200).
    const std::string_view chosen = generating      ? std::string_view()
                                    : called_xxhsum ? std::string_view("xxhsum")
                                                    : named_subcommand(argc, argv);
    std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
    const Command* chosen_command = nullptr;
    for (const Command& c : commands) {
        CLI::App* sub = app.add_subcommand(c.name, c.summary);
        if (generating || chosen == c.name) {
            if (chosen == c.name) chosen_command = &c;
            set_tool_name(c.name);
            actions.emplace_back(sub, c.setup(*sub));
        }
    }
    if (generating) return generate_docs(app, argv[2], argv[3]) ? kOk : kFailure;
    // Every way out goes through finish_output(): --help and --version
    // write to standard output too, and a failed write is not a success.
    if (own_words == nullptr && asks_for(argc, argv, {"--version"}) &&
        !asks_for(argc, argv, {"-h", "--help"})) {
        emit(stdout, "uringkit {}\n", uringkit::version_string);
        return finish_output(kOk);
    }
    const std::string path = command_path(argc, argv, chosen);
    if (!chosen.empty() && actions.empty()) {
        const std::string_view near = nearest_command(chosen);
        std::string message = fmt::format("'{}' is not a command", chosen);
        if (!near.empty()) message += fmt::format("; did you mean '{}'?", near);
        return finish_output(usage_error("", message));
    }
    if (asks_for(argc, argv, {"-h", "--help"})) {
        const CLI::App* shown = &app;
        if (!actions.empty()) {
            shown = actions.front().first;
            if (path.find(' ') != std::string::npos)
                shown = actions.front().first->get_subcommand(path.substr(path.find(' ') + 1));
        }
        put(stdout, shown->get_formatter()->make_help(shown, shown->get_name(),
                                                      CLI::AppFormatMode::Normal));
        return finish_output(kOk);
    }
    if (chosen.empty()) {
        bool option = false;
        for (int i = 1; i < argc; ++i) option = option || argv[i][0] == '-';
        return finish_output(usage_error(
            "", option ? fmt::format("unknown option '{}'; a command comes first", argv[1])
                       : "a command is required: probe, bench, cp, readfiles, xxhsum, serve or "
                         "load"));
    }
    typed_argc = argc;
    typed_argv = argv;
    typed_app = actions.empty() ? nullptr : actions.front().first;
    if (own_words != nullptr) {
        // The words after the subcommand's name (the first word that is not an option).
        int at = 1;
        while (at < argc && argv[at][0] == '-') ++at;
        own_words->assign(argv + std::min(at + 1, argc), argv + argc);
    } else {
        std::vector<std::string> expanded;
        if (chosen_command && chosen_command->abbreviations) {
            std::string ambiguous;
            expanded = expand_abbreviations(*actions.front().first, chosen_command->peer_options,
                                            argc, argv, ambiguous);
            if (!ambiguous.empty())
                return finish_output(as_usage(chosen_command, usage_error(path, ambiguous)));
        }
        try {
            if (expanded.empty()) {
                app.parse(argc, argv);
            } else {
                std::vector<char*> words;
                for (std::string& w : expanded) words.push_back(w.data());
                app.parse(static_cast<int>(words.size()), words.data());
            }
        } catch (const CLI::ParseError& e) {
            return finish_output(as_usage(chosen_command, usage_error(path, e.what())));
        }
    }
    // Below the minimum every tool still runs where its fallbacks reach; say once that it is
    // untested ground.
    if (const std::string notice =
            uringkit::probe::below_minimum_notice(uringkit::probe::running_kernel_release());
        !notice.empty())
        emit(stderr, "uringkit: {}\n", notice);
    int status = kUsage;
    try {
        for (auto& [sub, action] : actions)
            if (sub->parsed() || own_words != nullptr) {
                status = action();
                break;
            }
    } catch (const std::bad_alloc&) {
        emit(stderr, "uringkit {}: out of memory\n", chosen);
        status = kFailure;
    } catch (const std::exception& e) {
        emit(stderr, "uringkit {}: {}\n", chosen, e.what());
        status = kFailure;
    }
    return finish_output(as_usage(chosen_command, status));
}
