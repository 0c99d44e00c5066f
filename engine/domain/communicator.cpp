#include "engine/domain/communicator.hpp"

#include <climits>
#include <stdexcept>
#include <string>

namespace tissue::domain {

void check_message(int rank, int tag, std::size_t bytes, int size) {
  if (rank < 0 || rank >= size)
    throw std::invalid_argument("message to or from rank " + std::to_string(rank) + " of " +
                                std::to_string(size));
  if (tag < 0 || tag > Communicator::max_tag)
    throw std::invalid_argument("message tag " + std::to_string(tag) + " outside [0, " +
                                std::to_string(Communicator::max_tag) + "]");
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw std::length_error("message of " + std::to_string(bytes) + " bytes: at most 2^31 - 1 (MPI counts)");
}

std::vector<Bytes> SerialCommunicator::exchange(const std::vector<Outgoing>& sends,
                                                const std::vector<Incoming>& receives) {
  for (const Outgoing& s : sends) check_message(s.to, s.tag, s.bytes.size(), 1);
  for (const Incoming& r : receives) check_message(r.from, r.tag, 0, 1);
  std::vector<bool> taken(sends.size(), false);
  std::vector<Bytes> received;
  received.reserve(receives.size());
  for (const Incoming& r : receives) {
    std::size_t s = 0;
    while (s < sends.size() && (taken[s] || sends[s].tag != r.tag)) ++s;
    if (s == sends.size())
      throw std::logic_error("serial exchange: no message with tag " + std::to_string(r.tag) + " was sent");
    taken[s] = true;
    received.emplace_back(sends[s].bytes.begin(), sends[s].bytes.end());
  }
  for (std::size_t s = 0; s < sends.size(); ++s)
    if (!taken[s])
      throw std::logic_error("serial exchange: the message with tag " + std::to_string(sends[s].tag) +
                             " is never received");
  return received;
}

std::vector<Bytes> SerialCommunicator::all_to_all(const std::vector<Bytes>& send) {
  if (send.size() != 1)
    throw std::invalid_argument("all_to_all: " + std::to_string(send.size()) + " messages for 1 rank");
  return send;
}

}  // namespace tissue::domain
