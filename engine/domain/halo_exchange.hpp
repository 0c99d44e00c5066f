#pragma once
/// @file halo_exchange.hpp
/// Ghost copies of a table's rows near the faces of this rank's subdomain, from every rank (this one
/// included, on a periodic axis that is not split) whose points lie in its ghost band, with the conventions
/// of decomposition.hpp. build() chooses the rows to send from the current positions
/// (Decomposition::halo_sends) and exchanges them; refresh() sends the same rows again with their current
/// values, as MD codes forward positions between neighbour-list rebuilds (before each force evaluation,
/// twice per RK2 step), valid while no point has moved further than the skin allows.
///
/// Ghost positions arrive as the sender holds them (wrapped into the box), not shifted: each GhostRange
/// carries the shift that places its rows next to this subdomain. A force kernel takes a ghost's
/// displacement as (x_j - x_i) + shift_x, which rounds exactly as the single-domain minimum image
/// (x_j - x_i) - lx floor((x_j - x_i) / lx + 1/2) does for the image within the cut-off (lx floor(...) is
/// exactly -shift_x, 0 or ±lx, and the remaining sum is the same float operation), so that forces with
/// ghosts can equal the undecomposed forces to the bit. Binning a ghost uses x_j + shift_x. A point stored
/// one period away from its image nearest the sender's subdomain (a cell's element sticking out across a
/// periodic face of a split axis, HaloSend::image) is sent at that image, x_j + image_x in float, which the
/// range's shift then places; for those points the bit-for-bit argument does not hold (that addition rounds).
/// A consumer of images then takes the displacements between its own points at their images nearest its
/// subdomain too (no own image is delivered on a split axis).
///
/// Directions are never merged (Decomposition::halo_sends): on a periodic axis split in two, the left and
/// right neighbour are one rank, and its two messages, with their different shifts, are two ranges here; the
/// tag of a message is its direction.
///
/// HaloMode::distinct serves consumers that take every displacement by the whole box's minimum image (a cell
/// list binned on the whole box's grid, as the undecomposed SEM's): there a point's images are implicit, so
/// each rank receives each other rank's points that have an image in its band once, unshifted, and nothing
/// from itself. The forces are then the undecomposed ones, and the same to the bit when the neighbours are
/// visited in the undecomposed order (docs/multi_gpu.md). It needs what the minimum image needs anyway: the
/// periodic box at least twice the interaction distance along each periodic axis.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/table.hpp"
#include "engine/domain/communicator.hpp"
#include "engine/domain/decomposition.hpp"

namespace tissue::domain {

/// The ghost rows one halo message delivered.
struct GhostRange {
  std::size_t first = 0;  ///< first ghost row
  std::size_t count = 0;  ///< number of rows
  int from = -1;          ///< sending rank
  int dx = 0, dy = 0;     ///< direction of this rank as seen from the sender, each in {-1, 0, 1}
  float shift_x = 0.0f;   ///< add to the rows' x to place them next to this subdomain [length]
  float shift_y = 0.0f;   ///< add to the rows' y [length]
};

/// What a halo delivers (file comment).
enum class HaloMode {
  images,    ///< every image in the band: one message per direction, with its shift (self-messages included)
  distinct,  ///< each other rank's points once per receiver, unshifted; none from the rank itself
};

/// The halo exchange of one table on one rank (see the file comment). Host mirrors only: the caller
/// downloads the owned table before and uploads the ghosts after (a device pack/unpack is a later
/// transport of the same plan).
class HaloExchange {
 public:
  /// @param decomposition  the decomposition; kept by reference, so it must outlive the exchange
  /// @param comm           the transport, one rank per subdomain; kept by reference
  /// @param columns        names of the columns copied into the ghosts, the positions x and y [length]
  ///                       (float columns) first: they choose the rows sent
  /// @param mode           images (the default) or distinct
  /// @throws std::invalid_argument if comm.size() differs from decomposition.ranks() or fewer than two
  ///         columns are named
  HaloExchange(const Decomposition& decomposition, Communicator& comm, std::vector<std::string> columns,
               HaloMode mode = HaloMode::images);

  /// Sends the rows of `owned` (host mirror, rows [0, owned.size()), all inside this rank's subdomain) that
  /// lie within the halo width of the faces, and receives the ghosts of this rank into `ghosts`, which is
  /// resized to them, grouped by message in the order of ranges() (the incoming directions dy = -1..1,
  /// then dx = -1..1; distinct: the sending ranks in the order their first direction comes), each message's
  /// rows in the sender's row order (distinct: ascending, each row once). `ghosts` must have the named
  /// columns with the same value types and components; its other columns are left zero in new rows.
  /// Collective over all ranks.
  /// @throws std::invalid_argument for a missing column, a layout that differs, a position column that is
  ///         not float, or a point outside this rank's subdomain; NumericalError for a non-finite position.
  void build(Table& owned, Table& ghosts);

  /// Sends the rows the last build() chose again, with their current values, into the same ghost rows.
  /// Rows must not have been added, removed or reordered in between (rebuild then, on every rank).
  /// Collective over all ranks.
  /// @throws std::logic_error before the first build(), if `owned` has fewer rows than the rows chosen
  ///         need, or if a message's row count differs from its build's.
  void refresh(Table& owned, Table& ghosts);

  /// The ranges of ghost rows of the last build(), one per incoming message (empty ones included); distinct:
  /// dx = dy = 0 and no shift.
  const std::vector<GhostRange>& ranges() const { return ranges_; }
  /// Rows sent by the last build(), summed over its messages (a row near a corner is sent up to three
  /// times on a 2D process grid).
  std::size_t rows_sent() const;

  /// One message of the last build(): the receiving rank, its tag and the rows of the owned table it carries,
  /// in the order sent. For a transport of the same plan between device arrays (device_halo.hpp).
  struct SentRows {
    int to = -1;
    int tag = 0;
    std::vector<std::int32_t> rows;
  };
  /// The messages of the last build(), in the order sent. @throws std::logic_error in images mode when a
  /// message has points sent at another image than stored (HaloSend::image), which only transfer() places.
  std::vector<SentRows> sent_rows() const;
  /// The messages the last build() receives, in the order of ranges().
  const std::vector<Incoming>& receives() const { return receives_; }

 private:
  /// One outgoing message of the plan.
  struct Send {
    int to = -1, tag = 0;
    float shift_x = 0.0f, shift_y = 0.0f;
    std::vector<std::int32_t> rows;
    std::vector<std::uint8_t> image;  ///< HaloSend::image (images mode)
    float image_x = 0.0f, image_y = 0.0f;
  };
  /// Packs, exchanges and unpacks the plan's messages; sizes `ghosts` when `resize`.
  void transfer(Table& owned, Table& ghosts, bool resize);

  const Decomposition& decomposition_;
  Communicator& comm_;
  std::vector<std::string> columns_;
  HaloMode mode_;
  std::vector<Send> sends_;
  std::vector<Incoming> receives_;
  std::vector<GhostRange> ranges_;
  bool built_ = false;
};

/// The tag of a halo message sent in direction (dx, dy), each in {-1, 0, 1}: (dx + 1) + 3 (dy + 1).
constexpr int halo_tag(int dx, int dy) {
  return (dx + 1) + 3 * (dy + 1);
}

}  // namespace tissue::domain
