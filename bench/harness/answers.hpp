// Answers and zones the benchmarks store or serve: an upstream's answer to a question, an
// upstream's reply to the engine's upstream query, a small local zone. Shared by the harness
// suites and the Google Benchmark binaries so both measure the same inputs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "moat/engine/local_zone.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/types.hpp"

namespace moat::bench {

/// TTL of every generated answer: longer than any run, so no entry expires mid-run.
inline constexpr std::uint32_t kAnswerTtl = 3600;

/// Names of the local zone, 192.168.1.10 upwards.
inline constexpr std::array<std::string_view, 4> kLocalNames = {
    "nas.lan", "printer.lan", "router.lan", "media-server.home.arpa"};

/// An upstream answer to `name`/`qtype` (A or AAAA): the question and one record; `i` varies
/// the address.
[[nodiscard]] std::vector<std::uint8_t> make_answer(const wire::Name& name, wire::RrType qtype,
                                                    std::size_t i);

/// What an upstream would send back for `upstream_query`: its question, EDNS and one A record.
[[nodiscard]] std::vector<std::uint8_t> upstream_reply(std::span<const std::uint8_t> upstream_query,
                                                       std::size_t i);

/// The local zone of kLocalNames with their reverse names.
[[nodiscard]] engine::LocalZone make_local_zone();

}  // namespace moat::bench
