//===- CommandLine.cpp - The tools' command lines on CLI11 ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/CommandLine.h"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

namespace dtensor::tooling {

namespace {

/// Where an option's description starts in the help.
constexpr size_t kDescriptionColumn = 27;

/// True for an option that takes no value.
bool isFlag(const CLI::Option *opt) { return opt->get_expected_max() == 0; }

/// The dtensor tools' help: the usage line, the description, then the
/// arguments and each group of options as
///   --name VALUE             description, its lines broken by hand
/// and the footer; no CLI11 decorations (defaults, REQUIRED, "...").
class HelpFormatter : public CLI::Formatter {
public:
  explicit HelpFormatter(std::string usage) : usage(std::move(usage)) {
    column_width(kDescriptionColumn);
  }

  std::string make_help(const CLI::App *app, std::string,
                        CLI::AppFormatMode) const override {
    std::ostringstream out;
    out << usage;
    if (!app->get_description().empty())
      out << "\n" << app->get_description() << "\n";
    out << make_positionals(app) << optionGroups(app);
    if (!app->get_footer().empty())
      out << "\n" << app->get_footer() << "\n";
    return out.str();
  }

  std::string make_positionals(const CLI::App *app) const override {
    std::vector<const CLI::Option *> arguments =
        app->get_options([](const CLI::Option *opt) {
          return opt->get_positional() && !opt->get_group().empty();
        });
    return arguments.empty() ? "" : make_group("Arguments", true, arguments);
  }

  /// Each group of options with a name, in the order of their first
  /// options.
  std::string optionGroups(const CLI::App *app) const {
    std::string text;
    for (const std::string &group : app->get_groups()) {
      std::vector<const CLI::Option *> options =
          app->get_options([&](const CLI::Option *opt) {
            return opt->get_group() == group && opt->nonpositional();
          });
      if (!group.empty() && !options.empty())
        text += make_group(group, false, options);
    }
    return text;
  }

  std::string
  make_group(std::string group, bool positional,
             std::vector<const CLI::Option *> options) const override {
    std::string text = "\n" + group + ":\n";
    for (const CLI::Option *opt : options)
      text += make_option(opt, positional);
    return text;
  }

  std::string make_option_name(const CLI::Option *opt,
                               bool positional) const override {
    if (positional)
      return opt->get_name(true, false);
    std::string names;
    for (const std::string &name : opt->get_snames())
      names += (names.empty() ? "-" : ", -") + name;
    for (const std::string &name : opt->get_lnames())
      names += (names.empty() ? "--" : ", --") + name;
    return names;
  }

  std::string make_option_opts(const CLI::Option *opt) const override {
    if (!opt->get_option_text().empty())
      return " " + opt->get_option_text();
    if (isFlag(opt) || opt->get_positional())
      return "";
    return " " + opt->get_type_name();
  }

private:
  std::string usage;
};

} // namespace

CommandLine::CommandLine(std::string tool, std::string usage,
                         std::string description)
    : tool_(std::move(tool)), app_(std::move(description), tool_) {
  if (!usage.empty() && usage.back() != '\n')
    usage += '\n';
  app_.formatter(std::make_shared<HelpFormatter>(std::move(usage)));
  // The help flag is added by addHelp, where the tool wants it listed.
  app_.set_help_flag();
  // As the hand-written parsers did: the last of repeated values wins.
  app_.option_defaults()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->disable_flag_override();
}

CLI::Option *CommandLine::addHelp(const std::string &group) {
  // Not CLI11's help flag: that one is looked at only once every value has
  // been checked. This one stops the parsing where it stands, so that
  // `--help` wins over any mistake on the command line.
  help_ = app_.add_flag_callback(
                  "-h,--help", [] { throw CLI::CallForHelp(); }, "this text")
              ->trigger_on_parse()
              ->group(group);
  return help_;
}

std::optional<int> CommandLine::parse(int argc, const char *const *argv,
                                      int errorStatus, std::ostream &out,
                                      std::ostream &err) {
  if (!help_)
    addHelp();
  try {
    app_.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp &) {
    out << help() << std::flush;
    return 0;
  } catch (const CLI::ExtrasError &) {
    // Nothing takes these: options the tool does not know, or one argument
    // too many.
    for (const std::string &extra : app_.remaining())
      error((!extra.empty() && extra[0] == '-' ? "unknown option "
                                               : "unexpected argument ") +
                extra,
            err);
    err << help() << std::flush;
    return errorStatus;
  } catch (const CLI::ParseError &e) {
    error(e.what(), err);
    return errorStatus;
  }
}

void CommandLine::error(const std::string &message, std::ostream &err) const {
  err << tool_ << ": " << message << "\n" << std::flush;
}

std::string CommandLine::help() const { return app_.help(); }

std::vector<std::string> CommandLine::arguments(
    const std::vector<const CLI::Option *> &leaveOut) const {
  // parse_order() lists each option once per occurrence; its results are
  // those of every occurrence in order, as many per occurrence.
  std::map<const CLI::Option *, size_t> occurrences, seen;
  for (const CLI::Option *opt : app_.parse_order())
    ++occurrences[opt];
  std::vector<std::string> arguments;
  for (const CLI::Option *opt : app_.parse_order()) {
    const std::vector<std::string> &results = opt->results();
    size_t each = results.size() / occurrences[opt];
    size_t first = each * seen[opt]++;
    if (std::find(leaveOut.begin(), leaveOut.end(), opt) != leaveOut.end())
      continue;
    if (!opt->get_positional()) {
      arguments.push_back(opt->get_lnames().empty()
                              ? "-" + opt->get_snames().front()
                              : "--" + opt->get_lnames().front());
      if (isFlag(opt))
        continue; // its result is no argument
    }
    arguments.insert(arguments.end(), results.begin() + first,
                     results.begin() + first + each);
  }
  return arguments;
}

} // namespace dtensor::tooling
