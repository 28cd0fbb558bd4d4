// What a subcommand says about itself beyond its options: the long
// description, examples, exit statuses and its peers.  `--help`, the man
// pages and the shell completions are all written from the CLI11 option
// definitions plus this, so none of them can drift from the parser.
#pragma once

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace uringkit::cli {

struct Example {
    std::string command;  // as typed, starting with "uringkit"
    std::string what;     // one sentence
};

struct ExitStatus {
    int status;
    std::string meaning;
};

struct Manual {
    std::string description;  // the man page's DESCRIPTION; paragraphs separated by "\n\n"
    std::vector<Example> examples;
    std::vector<ExitStatus> exits;
    std::string see_also;  // "fio(1), cp(1)": the peers a reader would otherwise use
    std::string doc;       // the docs/ page with the figures, "bench.md"
};

// Puts the named options of `app` ("--filename", "-r") under `group` in
// --help and the man page, in the order given; a name that is not an
// option of `app` is a programming error (std::logic_error).
void group_options(CLI::App& app, const std::string& group,
                   std::initializer_list<const char*> names);

// Names the value of each option ("--filename", "FILE") as --help and the
// man page write it; FILE, DIR and TRACE values complete as paths.
void name_values(CLI::App& app, std::initializer_list<std::pair<const char*, const char*>> names);

// Attaches `m` to `app` (a subcommand, or the top level).
void describe(const CLI::App& app, Manual m);
const Manual* manual_of(const CLI::App* app);

// "uringkit bench net" for bench's net subcommand.
std::string full_name(const CLI::App* app);

// --help: usage, a sentence, the options by group with their defaults in
// plain words, examples, exit statuses, where the manual is.
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_help(const CLI::App* app, std::string name,
                          CLI::AppFormatMode mode) const override;
};

// How an option is written in help and man pages: "-r, --recursive",
// "--iodepth LIST", "--preserve[=LIST]".
std::string option_synopsis(const CLI::Option* opt);
// Its description with the default added in words where it has one and the
// text does not already say it; `brief` (for --help) keeps the first sentence.
std::string option_text(const CLI::Option* opt, bool brief);
// The groups of `app`'s options in the order they were first used, help first excluded.
std::vector<std::pair<std::string, std::vector<const CLI::Option*>>> option_groups(
    const CLI::App* app);
// The visible subcommands of `app`.
std::vector<const CLI::App*> visible_subcommands(const CLI::App* app);

// The words a shell may complete as `opt`'s value (engine names, modes);
// an option with a `{a,b}` validator, or a FILE or DIR value, needs none.
void complete_with(const CLI::Option* opt, std::vector<std::string> values);
std::vector<std::string> completion_values(const CLI::Option* opt);

// The man pages (uringkit.1, uringkit-SUB.1) and the bash and zsh
// completions of the top-level `app`, whose subcommands all have their
// options, written into `dir`.  False with a line on stderr when a file
// could not be written.
bool generate_docs(const CLI::App& app, const std::string& dir, const std::string& date);

// Where the installed documentation lives (CMake's DOCDIR, set at build time).
const char* doc_dir();

}  // namespace uringkit::cli
