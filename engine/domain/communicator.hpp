#pragma once
/// @file communicator.hpp
/// The transport the exchanges of a decomposed run go through (halo_exchange.hpp, migration.hpp): byte
/// messages between ranks, an all-to-all and the reductions a decomposed run needs. The messages are host
/// memory: this is the host-staged transport, which works with any MPI; device transports (NCCL,
/// CUDA-aware MPI) are further implementations of the same calls.
///
/// SerialCommunicator is the one rank of an undecomposed run, whose messages go to itself (a periodic axis
/// that is not split sends its halo to its own rank). MpiCommunicator (mpi_communicator.hpp, in the
/// tissue_domain_mpi library where MPI is built in) spans an MPI communicator.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/exec/span.hpp"

namespace tissue::domain {

/// A message's payload.
using Bytes = std::vector<std::byte>;

/// A message this rank sends: `bytes` to rank `to` with tag `tag`.
struct Outgoing {
  int to = -1;                  ///< receiving rank, in [0, size())
  int tag = 0;                  ///< in [0, Communicator::max_tag]
  Span<const std::byte> bytes;  ///< payload; must stay valid until exchange() returns
};

/// A message this rank receives: the one rank `from` sends it with tag `tag`.
struct Incoming {
  int from = -1;  ///< sending rank, in [0, size())
  int tag = 0;    ///< in [0, Communicator::max_tag]
};

/// Ranks exchanging byte messages (see the file comment). Every call is collective over the ranks it
/// involves: exchange() over the ranks that send to or receive from each other, the others over all.
/// Failures of the transport itself end the program (MPI's default error handler); the calls throw only
/// for arguments that no transport could carry out.
class Communicator {
 public:
  /// The largest tag exchange() accepts: one below the least upper bound MPI guarantees (32767), which
  /// the all-to-all's own messages use.
  static constexpr int max_tag = 32766;

  virtual ~Communicator() = default;
  /// This rank, in [0, size()).
  virtual int rank() const = 0;
  /// Number of ranks (>= 1).
  virtual int size() const = 0;

  /// Sends every message of `sends` and receives every message `receives` names; returns the received
  /// payloads in the order of `receives`. Each (from, tag) in `receives` must be matched by exactly one
  /// send of rank `from` to this rank with that tag in the same round (the ranks call exchange() the same
  /// number of times); sizes need not be known in advance. A rank may send to itself.
  /// @throws std::invalid_argument for a rank outside [0, size()) or a tag outside [0, max_tag];
  ///         std::length_error for a message over 2^31 - 1 bytes (MPI counts are int);
  ///         std::logic_error (serial only) when a receive has no matching send or a send no receive.
  virtual std::vector<Bytes> exchange(const std::vector<Outgoing>& sends,
                                      const std::vector<Incoming>& receives) = 0;

  /// All-to-all: `send[r]` goes to rank r (empty ones too: nothing is sent for them); returns, at index r,
  /// what rank r sent to this one. Collective over all ranks.
  /// @throws std::invalid_argument unless send.size() == size(); std::length_error for a message over
  ///         2^31 - 1 bytes.
  virtual std::vector<Bytes> all_to_all(const std::vector<Bytes>& send) = 0;

  /// The largest `value` over all ranks (collective). NaN on any rank gives NaN.
  virtual double max(double value) = 0;
  /// The largest of each entry over all ranks, in one reduction (collective; every rank passes as many).
  /// NaN on any rank gives NaN in that entry.
  virtual std::vector<double> max(const std::vector<double>& values) = 0;
  /// The largest `value` over all ranks (collective).
  virtual std::int64_t max(std::int64_t value) = 0;
  /// The sum of `value` over all ranks (collective).
  virtual std::int64_t sum(std::int64_t value) = 0;
};

/// The single rank of an undecomposed run: size() == 1, rank() == 0; messages go to itself.
class SerialCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  /// Receives match sends by tag, in the order sent (MPI's non-overtaking rule between one pair of ranks).
  std::vector<Bytes> exchange(const std::vector<Outgoing>& sends,
                              const std::vector<Incoming>& receives) override;
  std::vector<Bytes> all_to_all(const std::vector<Bytes>& send) override;
  double max(double value) override { return value; }
  std::vector<double> max(const std::vector<double>& values) override { return values; }
  std::int64_t max(std::int64_t value) override { return value; }
  std::int64_t sum(std::int64_t value) override { return value; }
};

/// Throws std::invalid_argument unless 0 <= rank < size and 0 <= tag <= Communicator::max_tag, and
/// std::length_error if `bytes` exceeds 2^31 - 1 (for the implementations' argument checks).
void check_message(int rank, int tag, std::size_t bytes, int size);

}  // namespace tissue::domain
