// Aggregates of a sparse matrix's graph for aggregation multigrid (aggregation_multigrid.hpp). Host code.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/linalg/aggregation_multigrid.hpp"

namespace tissue::linalg {

namespace {

/// Throws unless (offsets, columns) is a CSR pattern with ascending in-range columns.
void check_pattern(const std::vector<std::int32_t>& offsets, const std::vector<std::int32_t>& columns) {
  if (offsets.empty() || offsets.front() != 0 || static_cast<std::size_t>(offsets.back()) != columns.size())
    throw std::invalid_argument("aggregation: offsets and columns disagree");
  const auto n = static_cast<std::int32_t>(offsets.size() - 1);
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    if (offsets[i + 1] < offsets[i]) throw std::invalid_argument("aggregation: offsets decrease");
    for (auto k = offsets[i]; k < offsets[i + 1]; ++k) {
      const std::int32_t j = columns[static_cast<std::size_t>(k)];
      if (j < 0 || j >= n || (k > offsets[i] && columns[static_cast<std::size_t>(k) - 1] >= j))
        throw std::invalid_argument("aggregation: row " + std::to_string(i) +
                                    " has columns out of range or not ascending");
    }
  }
}

}  // namespace

AggregationLevel aggregate_graph(const std::vector<std::int32_t>& offsets,
                                 const std::vector<std::int32_t>& columns) {
  check_pattern(offsets, columns);
  const std::size_t n = offsets.size() - 1;
  AggregationLevel level;
  std::vector<std::int32_t>& agg = level.aggregate;
  agg.assign(n, -1);
  std::int32_t count = 0;
  const auto row = [&](std::size_t i) {
    return std::pair(columns.begin() + offsets[i], columns.begin() + offsets[i + 1]);
  };
  // pass 1: a node whose neighbours are all free becomes the root of an aggregate of it and them
  for (std::size_t i = 0; i < n; ++i) {
    if (agg[i] >= 0) continue;
    const auto [first, last] = row(i);
    if (std::any_of(first, last, [&](std::int32_t j) { return agg[static_cast<std::size_t>(j)] >= 0; }))
      continue;
    agg[i] = count;
    for (auto it = first; it != last; ++it) agg[static_cast<std::size_t>(*it)] = count;
    ++count;
  }
  // pass 2: a node left over joins the pass-1 aggregate of its first neighbour that has one (it has one:
  // that is why it was not a root)
  std::vector<std::int32_t> joined(agg);
  for (std::size_t i = 0; i < n; ++i) {
    if (agg[i] >= 0) continue;
    const auto [first, last] = row(i);
    for (auto it = first; it != last; ++it)
      if (agg[static_cast<std::size_t>(*it)] >= 0) {
        joined[i] = agg[static_cast<std::size_t>(*it)];
        break;
      }
  }
  agg = joined;
  const auto coarse = static_cast<std::size_t>(count);

  level.member_offsets.assign(coarse + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++level.member_offsets[static_cast<std::size_t>(agg[i]) + 1];
  for (std::size_t c = 0; c < coarse; ++c) level.member_offsets[c + 1] += level.member_offsets[c];
  level.members.resize(n);
  {
    std::vector<std::int32_t> next(level.member_offsets.begin(), level.member_offsets.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      level.members[static_cast<std::size_t>(next[static_cast<std::size_t>(agg[i])]++)] =
          static_cast<std::int32_t>(i);
  }
  // the coarse pattern: aggregates I, J are neighbours when some i in I and j in J are
  level.offsets.assign(coarse + 1, 0);
  std::vector<std::vector<std::int32_t>> coarse_rows(coarse);
  for (std::size_t c = 0; c < coarse; ++c) {
    auto& r = coarse_rows[c];
    for (auto m = level.member_offsets[c]; m < level.member_offsets[c + 1]; ++m) {
      const auto [first, last] = row(static_cast<std::size_t>(level.members[static_cast<std::size_t>(m)]));
      for (auto it = first; it != last; ++it) r.push_back(agg[static_cast<std::size_t>(*it)]);
    }
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    level.offsets[c + 1] = level.offsets[c] + static_cast<std::int32_t>(r.size());
  }
  level.columns.reserve(static_cast<std::size_t>(level.offsets.back()));
  for (const auto& r : coarse_rows) level.columns.insert(level.columns.end(), r.begin(), r.end());
  // the fine entries each coarse entry sums (every fine entry in exactly one list)
  std::vector<std::int32_t> target(columns.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::size_t>(agg[i]);
    const auto cfirst = level.columns.begin() + level.offsets[c];
    const auto clast = level.columns.begin() + level.offsets[c + 1];
    for (auto k = offsets[i]; k < offsets[i + 1]; ++k) {
      const std::int32_t cj = agg[static_cast<std::size_t>(columns[static_cast<std::size_t>(k)])];
      target[static_cast<std::size_t>(k)] =
          static_cast<std::int32_t>(std::lower_bound(cfirst, clast, cj) - level.columns.begin());
    }
  }
  level.source_offsets.assign(level.columns.size() + 1, 0);
  for (const std::int32_t t : target) ++level.source_offsets[static_cast<std::size_t>(t) + 1];
  for (std::size_t e = 0; e < level.columns.size(); ++e)
    level.source_offsets[e + 1] += level.source_offsets[e];
  level.sources.resize(columns.size());
  std::vector<std::int32_t> next(level.source_offsets.begin(), level.source_offsets.end() - 1);
  for (std::size_t k = 0; k < columns.size(); ++k)
    level.sources[static_cast<std::size_t>(next[static_cast<std::size_t>(target[k])]++)] =
        static_cast<std::int32_t>(k);
  return level;
}

std::vector<AggregationLevel> aggregation_hierarchy(const std::vector<std::int32_t>& offsets,
                                                    const std::vector<std::int32_t>& columns,
                                                    std::size_t coarsest_nodes) {
  std::vector<AggregationLevel> levels;
  const std::vector<std::int32_t>* o = &offsets;
  const std::vector<std::int32_t>* c = &columns;
  while (o->size() - 1 > coarsest_nodes) {
    AggregationLevel level = aggregate_graph(*o, *c);
    const std::size_t fine = o->size() - 1, coarse = level.member_offsets.size() - 1;
    if (2 * coarse > fine) break;  // coarsening stalls (many small components): stop here
    levels.push_back(std::move(level));
    o = &levels.back().offsets;
    c = &levels.back().columns;
  }
  return levels;
}

}  // namespace tissue::linalg
