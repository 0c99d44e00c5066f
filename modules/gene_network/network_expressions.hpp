#pragma once
/// @file network_expressions.hpp
/// Gene networks written in the scenario instead of C++: species, named parameters and one rate
/// expression d(species)/dt per species, built from the terms tissue modellers use (Hill activation and
/// repression, the seed's Hill form, mass-action products, production, decay, neighbour means, the
/// cell's adhesion and sampled signal fields). Expressions are parsed and checked with muParser (Debian's
/// libmuparser-dev) when the scenario is read; the CPU backend evaluates them with muParser's bytecode in
/// bulk over all cells, the CUDA backend compiles the CUDA C++ that cuda_source() generates from the same
/// text with NVRTC (modules/gene_network/user_network.hpp). Language: modules/gene_network/README.md.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/io/scenario.hpp"

namespace tissue::grn {

/// Most sampled fields one network may read.
inline constexpr int kMaxNetworkFields = 8;
/// Most species whose neighbour mean a network may read.
inline constexpr int kMaxMeanSpecies = 16;

/// One species of a scenario-defined network.
struct UserSpecies {
  std::string name;
  double initial = 0.0;  ///< concentration of new cells [concentration]
  std::string rate;      ///< d(name)/dt [concentration/time] as an expression
  std::string where;     ///< "file:line:column: gene_network.species[i].rate" for messages
};

/// One SBML event run per cell per step (network_events.hpp): it fires in a cell when `trigger` goes from
/// false to true between the ends of two steps; its assignments (species rows of the spec) are then all
/// computed from the state before any of them is applied.
struct UserEvent {
  std::string id;                                        ///< the SBML event's id, for messages
  std::string trigger;                                   ///< expression; nonzero is true
  bool initial_value = true;                             ///< the trigger's value before t = 0
  std::vector<std::pair<int, std::string>> assignments;  ///< species row, expression of its new value
  std::string where;                                     ///< "file:line:column: ...: event 'id'"
};

/// A gene network defined in the scenario ([gene_network] with [[gene_network.species]]).
/// Names an expression may use: the species (this cell's value), mean_<species> (the mean over
/// neighbouring cells, 0 without neighbours), `adhesion` (sum of z over the cell's adhesive elements, the
/// seed's basement-membrane input), the sampled signal fields listed in `fields`, and the parameters.
struct UserNetworkSpec {
  std::vector<UserSpecies> species;
  std::vector<std::pair<std::string, double>> parameters;  ///< named constants, in file order
  std::vector<std::string> fields;  ///< cell columns of sampled signal fields the expressions read
  std::string suprabasal;           ///< expression: nonzero sets the cell's suprabasal state ("" = none)
  std::string suprabasal_where;     ///< location of `suprabasal` for messages
  double neighbour_distance = 0.8;  ///< cells are neighbours when their centres are closer [length]
  std::vector<int> mean_species;    ///< species whose neighbour mean some rate reads, ascending
  bool reads_adhesion = false;      ///< some expression reads `adhesion`
  std::vector<UserEvent> events;    ///< SBML events, in document order (network_events.hpp)

  /// Row of the species `name` in the cells' species column, or -1.
  int species_index(const std::string& name) const;
};

/// True when [gene_network] defines its own species (a scenario-defined network).
bool has_user_network(const io::ScenarioTable& gene_network);

/// Reads a scenario-defined network from [gene_network]: `parameters` (table of numbers), `species`
/// (array of tables {name, initial, rate}), optional `suprabasal` and `neighbour_distance`.
/// `available_fields` are the signal fields of the scenario (cell columns of the same names).
/// @throws InputError naming file:line, the token and its column for any expression error (syntax, an
///         unknown name, `^` or `=`), and for duplicate or reserved names, more than kMaxNetworkFields
///         fields or kMaxMeanSpecies neighbour means read.
UserNetworkSpec read_user_network(const io::ScenarioTable& gene_network,
                                  const std::vector<std::string>& available_fields);

/// Checks every expression of `spec` (species rates and `suprabasal`, whose `where` name their places) and
/// fills what they read: mean_species, fields (of `available_fields`, in that order) and reads_adhesion.
/// Shared by networks written in the scenario and networks read from SBML (sbml_network.hpp).
/// @throws InputError naming the expression's place and token for any expression error; at the key
///         "species" of `t` for more than kMaxMeanSpecies neighbour means or kMaxNetworkFields fields.
void check_user_network(UserNetworkSpec& spec, const io::ScenarioTable& t,
                        const std::vector<std::string>& available_fields);

/// CUDA C++ source of the kernel
///   extern "C" __global__ void user_network_stage(const float* eval, const float* base, float* out,
///       const float* means, UserNetworkFields fields, unsigned* flags, unsigned suprabasal_bit,
///       unsigned long long stride, unsigned long long n, double h)
/// that does, for cell c < n, out = max(0, base + h f(eval)) for every species (rows of `stride`
/// floats; row S = adhesion, read only), `means` holding one row per mean_species entry, and, when flags
/// is not null, sets or clears suprabasal_bit from the suprabasal expression on the result. Arithmetic in
/// double, as on the host path.
std::string cuda_source(const UserNetworkSpec& spec);

/// The host path: every expression compiled to muParser bytecode and evaluated over all cells at once
/// (muParser's bulk mode, OpenMP threads inside). Same arithmetic as the generated CUDA source.
class HostNetworkEvaluator {
 public:
  explicit HostNetworkEvaluator(const UserNetworkSpec& spec);
  ~HostNetworkEvaluator();
  HostNetworkEvaluator(const HostNetworkEvaluator&) = delete;
  HostNetworkEvaluator& operator=(const HostNetworkEvaluator&) = delete;

  /// One explicit stage over cells [0, n), host memory, the layout of cuda_source(); `fields[i]` is the
  /// column of spec.fields[i]; flags may be null.
  void stage(const float* eval, const float* base, float* out, const float* means,
             const std::vector<const float*>& fields, unsigned* flags, unsigned suprabasal_bit,
             std::size_t stride, std::size_t n, double h);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// `expr` (checked) as CUDA C++ in the names of cuda_source(): s_<species>, m_<species>, in_adhesion,
/// f_<field>, p_<parameter>, and p_time for `time` when `with_time`.
std::string cuda_expression(const std::string& expr, const UserNetworkSpec& spec, bool with_time);

}  // namespace tissue::grn
