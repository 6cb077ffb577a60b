// A message validate() accepts survives the round trip to_record -> MessageBuilder -> parse with
// the same questions, records and EDNS data (unit/support/wire_roundtrip.hpp says exactly what
// "the same" means). The rebuilt message must itself validate.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_check.hpp"
#include "moat/wire/validate.hpp"
#include "unit/support/wire_roundtrip.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> msg(data, size);
    if (!moat::wire::validate(msg)) {
        return 0;
    }
    const auto trip = moat::test::round_trip(msg);
    MOAT_FUZZ_CHECK(trip.status != moat::test::RoundTrip::Status::failed, trip.why);
    return 0;
}
