#include "engine/domain/device_halo.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "engine/exec/memory.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::domain {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Row k of the plan sits in the message (first, count): its value of column c at
/// columns * first + c * count + (k - first) of the buffer.
struct PackRows {
  Span<const std::int32_t> rows, segment;
  Span<const float> columns[DeviceHalo::kMaxColumns];
  std::size_t ncols;
  Span<float> buffer;
  TISSUE_HD void operator()(std::size_t k) const {
    const auto first = static_cast<std::size_t>(segment[2 * k]);
    const auto count = static_cast<std::size_t>(segment[2 * k + 1]);
    const std::size_t base = ncols * first + (k - first);
    for (std::size_t c = 0; c < ncols; ++c)
      buffer[base + c * count] = columns[c][static_cast<std::size_t>(rows[k])];
  }
};

/// The inverse of PackRows: buffer entries into the rows (each row once: no two threads write one row).
struct UnpackRows {
  Span<const std::int32_t> rows, segment;
  Span<float> columns[DeviceHalo::kMaxColumns];
  std::size_t ncols;
  Span<const float> buffer;
  TISSUE_HD void operator()(std::size_t k) const {
    const auto first = static_cast<std::size_t>(segment[2 * k]);
    const auto count = static_cast<std::size_t>(segment[2 * k + 1]);
    const std::size_t base = ncols * first + (k - first);
    for (std::size_t c = 0; c < ncols; ++c)
      columns[c][static_cast<std::size_t>(rows[k])] = buffer[base + c * count];
  }
};

/// Concatenates the messages' rows, records each message's segment and each row's (first, count).
void lay_out(const std::vector<HaloRows>& messages, std::vector<std::int32_t>& rows,
             std::vector<std::int32_t>& per_row, std::int32_t& max_row,
             std::vector<std::pair<int, int>>& peers, std::vector<std::size_t>& firsts) {
  rows.clear();
  per_row.clear();
  peers.clear();
  firsts.clear();
  for (const HaloRows& m : messages) {
    const std::size_t first = rows.size();
    peers.emplace_back(m.peer, m.tag);
    firsts.push_back(first);
    for (const std::int32_t r : m.rows) {
      if (r < 0)
        throw std::invalid_argument("DeviceHalo: negative row " + std::to_string(r) + " in the plan");
      rows.push_back(r);
      per_row.push_back(static_cast<std::int32_t>(first));
      per_row.push_back(static_cast<std::int32_t>(m.rows.size()));
      max_row = std::max(max_row, r);
    }
  }
}

}  // namespace

void StagedTransport::exchange(const std::vector<DeviceMessage>& sends,
                               const std::vector<DeviceMessage>& receives) {
  staged_.resize(sends.size());
  std::vector<Outgoing> outgoing;
  outgoing.reserve(sends.size());
  for (std::size_t m = 0; m < sends.size(); ++m) {
    staged_[m].resize(sends[m].bytes.size());
    if (!staged_[m].empty())
      exec::copy_bytes(staged_[m].data(), exec::Backend::cpu, sends[m].bytes.data(), exec::backend(),
                       staged_[m].size());
    outgoing.push_back(
        Outgoing{sends[m].peer, sends[m].tag, Span<const std::byte>(staged_[m].data(), staged_[m].size())});
  }
  std::vector<Incoming> incoming;
  incoming.reserve(receives.size());
  for (const DeviceMessage& r : receives) incoming.push_back(Incoming{r.peer, r.tag});
  const std::vector<Bytes> received = comm_.exchange(outgoing, incoming);
  for (std::size_t m = 0; m < receives.size(); ++m) {
    if (received[m].size() != receives[m].bytes.size())
      throw std::logic_error("device halo: rank " + std::to_string(receives[m].peer) + " sent " +
                             std::to_string(received[m].size()) + " bytes where " +
                             std::to_string(receives[m].bytes.size()) + " were planned");
    if (!received[m].empty())
      exec::copy_bytes(receives[m].bytes.data(), exec::backend(), received[m].data(), exec::Backend::cpu,
                       received[m].size());
  }
}

void DeviceHalo::set_plan(const HaloExchange& halo,
                          const std::function<std::int32_t(std::int32_t)>& owned_row,
                          const std::vector<std::int32_t>& ghost_rows) {
  std::vector<HaloRows> sends, receives;
  for (HaloExchange::SentRows& s : halo.sent_rows()) {
    for (std::int32_t& row : s.rows) row = owned_row(row);
    sends.push_back(HaloRows{s.to, s.tag, std::move(s.rows)});
  }
  for (std::size_t m = 0; m < halo.receives().size(); ++m) {
    const GhostRange& range = halo.ranges()[m];
    if (range.first + range.count > ghost_rows.size())
      throw std::invalid_argument("device halo: ghost rows up to " +
                                  std::to_string(range.first + range.count) + ", merged rows given for " +
                                  std::to_string(ghost_rows.size()));
    HaloRows r{halo.receives()[m].from, halo.receives()[m].tag, {}};
    r.rows.assign(ghost_rows.begin() + static_cast<std::ptrdiff_t>(range.first),
                  ghost_rows.begin() + static_cast<std::ptrdiff_t>(range.first + range.count));
    receives.push_back(std::move(r));
  }
  set_plan(sends, receives);
}

void DeviceHalo::set_plan(const std::vector<HaloRows>& sends, const std::vector<HaloRows>& receives) {
  max_row_ = -1;
  std::vector<std::int32_t> per_row;
  std::vector<std::pair<int, int>> peers;
  std::vector<std::size_t> firsts;
  const auto segments = [&](const std::vector<HaloRows>& messages, std::vector<Segment>& out) {
    out.clear();
    for (std::size_t m = 0; m < messages.size(); ++m)
      out.push_back(Segment{peers[m].first, peers[m].second, firsts[m], messages[m].rows.size()});
  };
  lay_out(sends, send_rows_, per_row, max_row_, peers, firsts);
  segments(sends, send_segments_);
  send_rows_d_.assign(send_rows_);
  send_segment_d_.assign(per_row);
  lay_out(receives, receive_rows_, per_row, max_row_, peers, firsts);
  segments(receives, receive_segments_);
  receive_rows_d_.assign(receive_rows_);
  receive_segment_d_.assign(per_row);
}

void DeviceHalo::exchange(const std::vector<Span<float>>& columns) {
  const std::size_t ncols = columns.size();
  if (ncols == 0 || ncols > kMaxColumns)
    throw std::invalid_argument("DeviceHalo::exchange: " + std::to_string(ncols) + " columns (1 to " +
                                std::to_string(kMaxColumns) + ")");
  for (const Span<float>& c : columns)
    if (static_cast<std::int64_t>(c.size()) <= max_row_)
      throw std::invalid_argument("DeviceHalo::exchange: a column of " + std::to_string(c.size()) +
                                  " rows for a plan that reaches row " + std::to_string(max_row_));
  send_buffer_.ensure(ncols * send_rows_.size());
  receive_buffer_.ensure(ncols * receive_rows_.size());

  if (timing_) exec::synchronize();  // the caller's device work queued before is not the halo's
  auto t0 = Clock::now();
  PackRows pack{send_rows_d_.span(), send_segment_d_.span(), {}, ncols, send_buffer_.span()};
  for (std::size_t c = 0; c < ncols; ++c) pack.columns[c] = columns[c];
  exec::parallel_for(send_rows_.size(), pack);
  if (timing_) {
    exec::synchronize();
    timings_.pack += seconds_since(t0);
    t0 = Clock::now();
  }

  const auto messages = [&](const std::vector<Segment>& segments, DeviceBuffer<float>& buffer) {
    std::vector<DeviceMessage> out;
    out.reserve(segments.size());
    for (const Segment& s : segments)
      out.push_back(
          DeviceMessage{s.peer, s.tag,
                        Span<std::byte>(reinterpret_cast<std::byte*>(buffer.data() + ncols * s.first),
                                        ncols * s.count * sizeof(float))});
    return out;
  };
  transport_.exchange(messages(send_segments_, send_buffer_), messages(receive_segments_, receive_buffer_));
  if (timing_) {
    exec::synchronize();
    timings_.transfer += seconds_since(t0);
    t0 = Clock::now();
  }

  UnpackRows unpack{receive_rows_d_.span(), receive_segment_d_.span(), {}, ncols, receive_buffer_.span()};
  for (std::size_t c = 0; c < ncols; ++c) unpack.columns[c] = columns[c];
  exec::parallel_for(receive_rows_.size(), unpack);
  if (timing_) {
    exec::synchronize();
    timings_.unpack += seconds_since(t0);
  }
  ++timings_.exchanges;
}

}  // namespace tissue::domain
