#pragma once
/// @file device_halo.hpp
/// The halo refresh of a decomposed run between device arrays: the rows a HaloExchange plan chose are
/// gathered into one send buffer on the device (pack), the buffers go to the neighbours through a
/// DeviceTransport, and the received values are scattered into the ghost rows on the device (unpack). Between
/// rebuilds this replaces HaloExchange::refresh's host round trip of whole tables: only the ghosts' values
/// move, twice per RK2 step (positions, then midpoints).
///
/// Two transports: StagedTransport copies the buffers to the host and sends them with a Communicator (any
/// MPI; the only one on the CPU backend); NcclTransport (nccl_transport.hpp, CUDA builds with NCCL and MPI)
/// sends device memory directly with ncclSend / ncclRecv in one group.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/domain/communicator.hpp"
#include "engine/domain/halo_exchange.hpp"
#include "engine/exec/device_buffer.hpp"

namespace tissue::domain {

/// One message of a device exchange: `bytes` in the active backend's memory, to or from rank `peer`.
struct DeviceMessage {
  int peer = -1;  ///< receiving rank (a send) or sending rank (a receive), in [0, size)
  int tag = 0;    ///< in [0, Communicator::max_tag]; a send and its receive carry the same tag
  Span<std::byte> bytes;
};

/// Moves device buffers between ranks (device_halo.hpp). Every call is collective over the ranks involved.
class DeviceTransport {
 public:
  virtual ~DeviceTransport() = default;
  /// Sends every message of `sends` and fills every message of `receives` (whose sizes the receiver knows:
  /// the sender's message must have exactly that size). Between one pair of ranks, messages are matched by
  /// tag; each (peer, tag) appears at most once in `sends` and once in `receives`. Returns once the received
  /// bytes are in place for the next device work (stream-ordered on the CUDA backend).
  /// @throws std::logic_error for a size mismatch that the transport can detect (staged).
  virtual void exchange(const std::vector<DeviceMessage>& sends,
                        const std::vector<DeviceMessage>& receives) = 0;
  /// A short name for reports ("staged", "nccl").
  virtual const char* name() const = 0;
};

/// The host-staged transport: device -> host copies, Communicator::exchange, host -> device copies.
class StagedTransport final : public DeviceTransport {
 public:
  /// @param comm  kept by reference
  explicit StagedTransport(Communicator& comm) : comm_(comm) {}
  void exchange(const std::vector<DeviceMessage>& sends, const std::vector<DeviceMessage>& receives) override;
  const char* name() const override { return "staged"; }

 private:
  Communicator& comm_;
  std::vector<Bytes> staged_;
};

/// One message of a plan: rows of the local arrays sent to or received from `peer` (see DeviceHalo).
struct HaloRows {
  int peer = -1;
  int tag = 0;
  std::vector<std::int32_t> rows;  ///< sends: rows gathered, in message order; receives: rows scattered into
};

/// A halo plan between device arrays (file comment): which rows go out in which message and which rows the
/// received messages fill. Refreshes up to kMaxColumns float columns at a time; a message carries its rows'
/// values column after column.
class DeviceHalo {
 public:
  static constexpr std::size_t kMaxColumns = 8;

  /// Time spent in the parts of exchange() [s], when timing is on (set_timing): the device is synchronised
  /// before the pack (the work queued earlier is not counted) and after each part.
  struct Timings {
    double pack = 0.0;      ///< gathering the sent rows (device)
    double transfer = 0.0;  ///< the transport (copies to and from the host included, staged)
    double unpack = 0.0;    ///< scattering the received rows (device)
    std::size_t exchanges = 0;
  };

  /// @param transport  kept by reference
  explicit DeviceHalo(DeviceTransport& transport) : transport_(transport) {}

  /// Sets the plan (uploads the row indices). Rows index the arrays later passed to exchange().
  /// @throws std::invalid_argument for a negative row.
  void set_plan(const std::vector<HaloRows>& sends, const std::vector<HaloRows>& receives);
  /// Sets the plan of `halo`'s last build() between the rows of merged arrays (owned and ghost rows in one
  /// array): a row r of the owned table it sent goes out from merged row owned_row(r), ghost row g comes into
  /// merged row ghost_rows[g].
  /// @throws std::invalid_argument as set_plan() above, or for a ghost row beyond ghost_rows.
  void set_plan(const HaloExchange& halo, const std::function<std::int32_t(std::int32_t)>& owned_row,
                const std::vector<std::int32_t>& ghost_rows);

  /// Sends the planned rows of `columns` and writes the received values into the planned rows of the same
  /// columns (each at least as long as the largest row index + 1, on the active backend). Collective.
  /// @throws std::invalid_argument for no or more than kMaxColumns columns, or a column too short for the
  /// plan.
  void exchange(const std::vector<Span<float>>& columns);

  /// Rows sent and received per exchange, summed over the messages.
  std::size_t rows_sent() const { return send_rows_.size(); }
  std::size_t rows_received() const { return receive_rows_.size(); }
  /// Switches the timing of exchange()'s parts on (synchronising the device between them) or off.
  void set_timing(bool on) { timing_ = on; }
  const Timings& timings() const { return timings_; }
  void reset_timings() { timings_ = Timings{}; }

 private:
  /// A message's place in the send or receive buffer: first row of the plan's concatenated rows, row count.
  struct Segment {
    int peer, tag;
    std::size_t first, count;
  };
  DeviceTransport& transport_;
  std::vector<Segment> send_segments_, receive_segments_;
  std::vector<std::int32_t> send_rows_, receive_rows_;  // host copies (for the checks)
  std::int32_t max_row_ = -1;
  DeviceBuffer<std::int32_t> send_rows_d_, receive_rows_d_;
  DeviceBuffer<std::int32_t> send_segment_d_, receive_segment_d_;  // per row: (first, count) of its message
  DeviceBuffer<float> send_buffer_, receive_buffer_;
  bool timing_ = false;
  Timings timings_;
};

}  // namespace tissue::domain
