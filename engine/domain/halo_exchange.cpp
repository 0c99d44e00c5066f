#include "engine/domain/halo_exchange.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "engine/core/column.hpp"
#include "engine/domain/table_rows.hpp"

namespace tissue::domain {
namespace {

/// A message's header: its row count and the shift of its positions.
struct Header {
  std::uint64_t rows;
  float shift_x, shift_y;
};
static_assert(sizeof(Header) == 16, "the header is 16 bytes on every rank");

}  // namespace

HaloExchange::HaloExchange(const Decomposition& decomposition, Communicator& comm,
                           std::vector<std::string> columns, HaloMode mode)
    : decomposition_(decomposition), comm_(comm), columns_(std::move(columns)), mode_(mode) {
  if (comm_.size() != decomposition_.ranks())
    throw std::invalid_argument("halo exchange: " + std::to_string(comm_.size()) +
                                " ranks for a decomposition of " + std::to_string(decomposition_.ranks()));
  if (columns_.size() < 2)
    throw std::invalid_argument("halo exchange: the columns must name the positions x and y first");
}

std::size_t HaloExchange::rows_sent() const {
  std::size_t rows = 0;
  for (const Send& s : sends_) rows += s.rows.size();
  return rows;
}

std::vector<HaloExchange::SentRows> HaloExchange::sent_rows() const {
  std::vector<SentRows> out;
  out.reserve(sends_.size());
  for (const Send& s : sends_) {
    if (!s.image.empty())
      throw std::logic_error(
          "halo exchange: a message holds points sent at another image than stored, which "
          "only refresh() places");
    out.push_back(SentRows{s.to, s.tag, s.rows});
  }
  return out;
}

void HaloExchange::build(Table& owned, Table& ghosts) {
  const std::vector<ColumnBase*> from = find_columns(owned, columns_);
  check_same_layout(from, find_columns(ghosts, columns_), "halo exchange of '" + owned.name() + "'");
  auto* x = dynamic_cast<Column<float>*>(from[0]);
  auto* y = dynamic_cast<Column<float>*>(from[1]);
  if (x == nullptr || y == nullptr)
    throw std::invalid_argument("halo exchange: positions '" + columns_[0] + "', '" + columns_[1] +
                                "' must be float columns");
  const std::size_t n = owned.size();
  const int rank = comm_.rank();
  std::vector<HaloSend> plan = decomposition_.halo_sends(rank, Span<const float>(x->host_data().data(), n),
                                                         Span<const float>(y->host_data().data(), n));

  sends_.clear();
  receives_.clear();
  ranges_.clear();
  const auto [ix, iy] = decomposition_.coords(rank);
  if (mode_ == HaloMode::images) {
    for (HaloSend& h : plan)
      sends_.push_back(Send{h.to, halo_tag(h.dx, h.dy), h.shift_x, h.shift_y, std::move(h.index),
                            std::move(h.image), h.image_x, h.image_y});
    // the messages this rank receives: from the rank behind each direction, in the order of halo_sends
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0) continue;
        const int source = decomposition_.rank_at(ix - dx, iy - dy);
        if (source < 0) continue;
        receives_.push_back(Incoming{source, halo_tag(dx, dy)});
        GhostRange range;
        range.from = source;
        range.dx = dx;
        range.dy = dy;
        ranges_.push_back(range);
      }
  } else {
    // one message per other rank: the union of its directions' rows, unshifted; the tag of (0, 0), which no
    // direction has
    for (HaloSend& h : plan) {
      if (h.to == rank) continue;
      auto it = std::find_if(sends_.begin(), sends_.end(), [&](const Send& s) { return s.to == h.to; });
      if (it == sends_.end()) {
        sends_.push_back(Send{h.to, halo_tag(0, 0), 0.0f, 0.0f, {}, {}, 0.0f, 0.0f});
        it = sends_.end() - 1;
      }
      it->rows.insert(it->rows.end(), h.index.begin(), h.index.end());
    }
    for (Send& s : sends_) {
      std::sort(s.rows.begin(), s.rows.end());
      s.rows.erase(std::unique(s.rows.begin(), s.rows.end()), s.rows.end());
    }
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0) continue;
        const int source = decomposition_.rank_at(ix - dx, iy - dy);
        if (source < 0 || source == rank ||
            std::any_of(receives_.begin(), receives_.end(),
                        [&](const Incoming& r) { return r.from == source; }))
          continue;
        receives_.push_back(Incoming{source, halo_tag(0, 0)});
        GhostRange range;
        range.from = source;
        ranges_.push_back(range);
      }
  }
  built_ = true;
  transfer(owned, ghosts, true);
}

void HaloExchange::refresh(Table& owned, Table& ghosts) {
  if (!built_) throw std::logic_error("halo exchange: refresh() before the first build()");
  transfer(owned, ghosts, false);
}

void HaloExchange::transfer(Table& owned, Table& ghosts, bool resize) {
  const std::vector<ColumnBase*> from = find_columns(owned, columns_);
  const std::vector<ColumnBase*> to = find_columns(ghosts, columns_);
  check_same_layout(from, to, "halo exchange of '" + owned.name() + "'");

  std::vector<Bytes> packed(sends_.size());
  std::vector<Outgoing> outgoing;
  for (std::size_t m = 0; m < sends_.size(); ++m) {
    const Send& s = sends_[m];
    for (std::int32_t row : s.rows)
      if (static_cast<std::size_t>(row) >= owned.size())
        throw std::logic_error("halo exchange: row " + std::to_string(row) + " of '" + owned.name() +
                               "' was chosen by build() but the table now has " +
                               std::to_string(owned.size()) + " rows: build again");
    const Header header{s.rows.size(), s.shift_x, s.shift_y};
    packed[m].resize(sizeof(Header));
    std::memcpy(packed[m].data(), &header, sizeof(Header));
    pack_rows(from, s.rows, packed[m]);
    if (!s.image.empty()) {
      // points stored one period off their image nearest this subdomain: sent at that image (the x and y
      // columns are the first two of the packed block, one float per row each)
      const std::size_t n = s.rows.size();
      std::byte* values = packed[m].data() + sizeof(Header);
      const auto add = [&](std::size_t k, float shift) {
        float v;
        std::memcpy(&v, values + k * sizeof(float), sizeof(float));
        v += shift;
        std::memcpy(values + k * sizeof(float), &v, sizeof(float));
      };
      for (std::size_t k = 0; k < n; ++k) {
        if (s.image[k] & 1) add(k, s.image_x);
        if (s.image[k] & 2) add(n + k, s.image_y);
      }
    }
    outgoing.push_back(Outgoing{s.to, s.tag, Span<const std::byte>(packed[m].data(), packed[m].size())});
  }
  const std::vector<Bytes> received = comm_.exchange(outgoing, receives_);

  const std::size_t per_row = row_bytes(to);
  std::size_t total = 0;
  for (std::size_t m = 0; m < received.size(); ++m) {
    Header header{};
    if (received[m].size() < sizeof(Header))
      throw std::logic_error("halo exchange: a message without its header");
    std::memcpy(&header, received[m].data(), sizeof(Header));
    if (received[m].size() != sizeof(Header) + header.rows * per_row)
      throw std::logic_error("halo exchange: a message of " + std::to_string(received[m].size()) +
                             " bytes for " + std::to_string(header.rows) + " rows");
    GhostRange& range = ranges_[m];
    if (resize) {
      range.first = total;
      range.count = header.rows;
      range.shift_x = header.shift_x;
      range.shift_y = header.shift_y;
    } else if (range.count != header.rows) {
      throw std::logic_error("halo exchange: rank " + std::to_string(range.from) + " sent " +
                             std::to_string(header.rows) + " rows where its build sent " +
                             std::to_string(range.count) + ": build again on every rank");
    }
    total += header.rows;
  }
  if (resize) ghosts.resize(total);
  for (std::size_t m = 0; m < received.size(); ++m)
    unpack_rows(to, ranges_[m].first, ranges_[m].count, received[m].data() + sizeof(Header));
}

}  // namespace tissue::domain
