#pragma once
/// @file table_rows.hpp
/// Rows of a table's columns packed into bytes and back, on the host mirrors: the payload of halo
/// messages (halo_exchange.hpp) and of migrating cells (migration.hpp). Layout of a packed block of n rows:
/// column by column in the order given, component by component, the n values of each in row order (the
/// columns' own species-major layout), native byte order (the ranks of a run share one architecture).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/table.hpp"
#include "engine/domain/communicator.hpp"

namespace tissue::domain {

/// The columns of `table` named `names`, in that order.
/// @throws std::invalid_argument naming the table and the column if one is absent.
std::vector<ColumnBase*> find_columns(Table& table, const std::vector<std::string>& names);
/// Every column of `table`, in the order added.
std::vector<ColumnBase*> all_columns(Table& table);

/// Bytes one row of `columns` packs into: the sum of components x bytes per value.
std::size_t row_bytes(const std::vector<ColumnBase*>& columns);

/// Throws std::invalid_argument unless `to` has, in the same order, as many columns as `from` with the
/// same names, value types and component counts (`what` names the exchange in the message).
void check_same_layout(const std::vector<ColumnBase*>& from, const std::vector<ColumnBase*>& to,
                       const std::string& what);

/// Appends to `out` rows `rows` (host mirror indices, each < the column's capacity) of `columns`, packed as
/// the file comment says.
void pack_rows(const std::vector<ColumnBase*>& columns, const std::vector<std::int32_t>& rows, Bytes& out);

/// Writes `count` rows packed by pack_rows, read from `in`, into rows [first, first + count) of `columns`'
/// host mirrors (first + count <= capacity). Returns the bytes read: count x row_bytes(columns).
std::size_t unpack_rows(const std::vector<ColumnBase*>& columns, std::size_t first, std::size_t count,
                        const std::byte* in);

}  // namespace tissue::domain
