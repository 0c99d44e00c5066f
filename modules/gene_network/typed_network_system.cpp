// NetworkTypeSystem (typed_network.hpp): the cell's type as the float column the merged network reads.

#include "engine/exec/parallel_for.hpp"
#include "modules/gene_network/typed_network.hpp"

namespace tissue::grn {

namespace {

/// The SEM's int32 cell column of type indices (modules/sem/sem.hpp, kCellTypeColumn).
constexpr const char* kCellTypeColumn = "cell_type";

/// to[c] = from[c] (type indices < 8: exact in float).
struct TypeToFloat {
  Span<const std::int32_t> from;
  Span<float> to;
  TISSUE_HD void operator()(std::size_t c) const { to[c] = static_cast<float>(from[c]); }
};

}  // namespace

AccessList NetworkTypeSystem::access() const {
  AccessList a;
  a.read("cells", kCellTypeColumn);
  a.write("cells", kNetworkTypeColumn);
  return a;
}

void NetworkTypeSystem::run(World& w, const StepContext&) {
  const std::size_t n = w.cells.size();
  if (n == 0) return;
  exec::parallel_for(n, TypeToFloat{w.cells.column<std::int32_t>(kCellTypeColumn).span(),
                                    w.cells.column<float>(kNetworkTypeColumn).span()});
}

}  // namespace tissue::grn
