#pragma once
/// @file sweep_spec.hpp
/// The sweep file of `tissue sweep` (parameter sweeps and ensembles): parsed, validated and expanded into its
/// members, each a copy of the base scenario's text with the varied values written in. Nothing here runs.
///
/// Format (TOML):
// clang-format off
/// ```toml
/// scenario = "../../scenarios/epidermis.toml"  # base scenario, relative to this file's folder (required)
/// out = "sweeps/tgf"              # optional output directory (relative to the current directory)
/// steps = 20000                   # optional: end step of every member (overrides simulation.steps)
/// every = 0                       # optional: output cadence of every member (0: first and last only)
/// checkpoint_every = 5000         # optional: checkpoint cadence of every member
/// metrics = ["cells", "layers"]   # optional: non-empty, distinct names; absent = every metric
/// replicates = 2                  # optional, >= 1: simulation.seed = base seed + 0 .. n-1
/// # seeds = [1, 7, 42]            # or explicit seeds (not both): distinct integers >= 0
///
/// [grid]                          # full factorial over these keys
/// "gene_network.tgf_beta" = [0.2, 0.4]                                 # a list of values
/// "lifecycle.growth_interval" = { from = 1000, to = 3000, count = 3 } # linear, both ends included
/// "sem.intra.u0" = { from = 0.1, to = 1.0, count = 4, scale = "log" } # geometric (ends > 0)
/// "x.y" = { from = 0, to = 10, step = 2 }                              # from, from + step, ... <= to
///
/// [sample]                        # a random design (optional; may be combined with [grid])
/// method = "latin_hypercube"      # or "sobol" or "uniform" (required)
/// count = 16                      # number of design points, >= 1 (required)
/// seed = 7                        # seed of the design, >= 0, default 1 (not the simulations' seed)
/// [sample.ranges]
/// "gene_network.tgf_beta" = { from = 0.2, to = 0.8 }  # from < to; scale = "log" (ends > 0)
// clang-format on
/// ```
/// Keys of [grid] and [sample.ranges] are dotted scenario keys, written quoted as above or as nested tables
/// (`[grid.gene_network]` then `tgf_beta = [0.2, 0.4]`): an array, or a table with a `from` or `to` key,
/// ends the key. Each key must be set in the base scenario to a number, string or boolean (not a table,
/// an array or a date); `simulation.seed` alone may be absent there, and is then inserted (see below).
/// A key is varied at most once (in [grid], [sample.ranges], or by replicates/seeds for simulation.seed).
///
/// Values take the type of the base scenario's value:
/// - integer: list entries must be TOML integers (2.0 is refused); range and sample values are rounded to
///   the nearest integer (halves away from zero).
/// - float: list entries are numbers (integers accepted), finite; every value is written as a TOML float in
///   its shortest round-trip form, with ".0" appended where it would read as an integer (2 -> "2.0").
///   Values of a grid range (count or step) are first rounded to 15 significant digits, so that
///   `{ from = 0, to = 1, step = 0.1 }` gives 0.3, not 0.30000000000000004; sampled values are not rounded.
/// - string, boolean: list entries of that type; ranges and samples are refused.
/// A grid dimension whose values (after conversion) repeat one is refused: replicates repeat a member.
///
/// Ranges of [grid]: `count` (>= 1; count 1 gives `from`) gives from + (to - from) i / (count - 1), or
/// from (to / from)^(i / (count - 1)) with scale = "log", i = 0 .. count - 1, the last exactly `to`;
/// `step` (> 0, linear only) gives from + i step while <= to (plus 1e-9 step for rounding). to >= from.
///
/// Sample designs give, per design point and dimension (a [sample.ranges] key, in file order), u in [0, 1):
/// - "uniform": independent U(0,1) draws, point by point and within a point dimension by dimension, from
///   boost::random::mt19937_64(seed) through boost::random::uniform_01<double>.
/// - "latin_hypercube": for each dimension in turn, from one mt19937_64(seed): a random permutation p of the
///   count strata (Fisher-Yates, i = count-1 .. 1 swapping i with boost::random::uniform_int_distribution
///   (0, i)), then for each point j an offset r_j ~ uniform_01: u_j = (p_j + r_j) / count. Each stratum
///   [k/count, (k+1)/count) holds exactly one point per dimension.
/// - "sobol": boost::random::sobol (Joe and Kuo's direction numbers, unscrambled, Gray-code order; at most
///   3667 dimensions), which starts after the sequence's first point (the origin): the points of dimensions
///   1-2 are (0.5, 0.5), (0.75, 0.25), (0.25, 0.75), ... The engine gives 64-bit integers v in [0, 2^64); u =
///   the top 53 bits of v times 2^-53 (exact, < 1). `seed` does not change a Sobol design.
/// u maps to from + u (to - from), or from (to / from)^u with scale = "log". Both boost engines and
/// distributions give the same numbers on every platform (std distributions would not).
///
/// Members: every grid combination (the first grid key varies slowest) x every design point x every
/// replicate (innermost); a factor that is absent counts 1, so a sweep that varies nothing is one member.
/// At most kMaxMembers members.
///
/// Member scenario text: the base scenario's bytes with each varied key's value replaced, at its exact
/// source span, by the member's literal; comments, layout and line numbers stay. When simulation.seed is
/// varied but absent from the base, the line "seed = N" is inserted right after the base's `[simulation]`
/// header line (lines after it move down by one); a base without such a header (no [simulation] table, or
/// one defined inline, by dotted keys or only through [simulation.x]) is refused: write simulation.seed
/// there. Each member's text is parsed again and checked to hold the intended values (a bug guard).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/exec/error.hpp"

namespace tissue::sweep {

/// The most members a sweep may have (a product above it is refused before anything is expanded).
inline constexpr std::size_t kMaxMembers = 100000;
/// The most bytes the members' scenario texts may take together (members x base size, about).
inline constexpr std::uintmax_t kMaxMemberTextBytes = std::uintmax_t{1} << 30;

/// One varied scenario key.
struct Parameter {
  std::string key;    ///< dotted scenario key, e.g. "gene_network.tgf_beta" or "sem.intra.u0"
  std::string where;  ///< "sweepfile:line:column" of its entry in the sweep file (of `replicates`/`seeds`
                      ///< for the simulation.seed they add)
};

/// One member of the sweep.
struct Member {
  std::size_t index = 0;  ///< 0-based, in expansion order
  std::string name;  ///< directory name: "m" + index zero-padded to width max(3, digits of count-1): "m007"
  std::vector<std::string> values;  ///< one TOML literal per parameter, in SweepSpec::parameters order
                                    ///< ("0.4", "2000", "\"x\"", "true")
  std::string scenario_text;        ///< the base scenario's text with those values substituted
};

/// A parsed sweep file.
struct SweepSpec {
  std::filesystem::path file;  ///< the sweep file as given
  std::string text;            ///< its bytes
  std::filesystem::path base;  ///< the base scenario file (`scenario`, resolved against the sweep's folder)
  std::string base_text;       ///< its bytes
  std::vector<Parameter> parameters;  ///< grid keys (file order), then sample keys (file order), then
                                      ///< "simulation.seed" when replicates/seeds are given
  std::vector<Member> members;        ///< in expansion order (see the file comment); at least one
  std::vector<std::string> metrics;   ///< metric names asked for; empty = every metric the model has
  std::string metrics_where;          ///< file:line:column of `metrics` ("" when absent)
  std::optional<std::int64_t> steps, every, checkpoint_every;  ///< overrides of each member's run (>= 0),
                                                               ///< as tissue run's --steps, --every, ...
  std::string out;  ///< `out` key ("" when absent): output directory, relative to the current directory
};

/// Reads, validates and expands a sweep file, and reads its base scenario.
/// @throws InputError ("file:line:column: key: reason") on invalid input: the sweep file missing, not a
/// regular file, too large (io::kMaxScenarioBytes) or invalid; the base scenario likewise (its TOML errors
/// carry the base file's own position); keys of the sweep that the base does not set or cannot vary.
/// Never std::runtime_error for bad input; std::logic_error only for a bug (a member's text not holding
/// its values).
SweepSpec read_sweep(const std::filesystem::path& file);

/// Same as read_sweep from the sweep file's text; `source_name` stands for the file in messages, and the
/// base scenario's path resolves against its folder. @throws as read_sweep.
SweepSpec parse_sweep(std::string text, const std::string& source_name);

/// RFC 4180 quoting of one CSV field: returned as is unless it holds `,`, `"`, CR or LF; then quoted, with
/// each `"` doubled.
std::string csv_field(std::string_view text);

}  // namespace tissue::sweep
