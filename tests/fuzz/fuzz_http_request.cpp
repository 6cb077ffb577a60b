// HTTP/1.1 request parsing on any bytes: never crashes or reads outside the buffer, and a
// complete request is consistent: it took no more than the buffer, every view lies inside what
// it took, the header count is within the cap, parsing the same bytes again gives the same
// request, and no shorter prefix of it is already complete (so a request split across reads is
// read the same as one read whole).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "moat/http/request.hpp"

namespace {

bool inside(std::string_view part, std::string_view whole) {
    return part.empty() || (part.data() >= whole.data() &&
                            part.data() + part.size() <= whole.data() + whole.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view buffer(reinterpret_cast<const char*>(data), size);
    const moat::http::Limits limits{512, 256};  // small: the limits' edges are reached often
    moat::http::Request request;
    const moat::http::Parsed parsed = moat::http::parse_request(buffer, request, limits);
    if (parsed.state != moat::http::Parsed::State::complete) {
        return 0;
    }
    MOAT_FUZZ_CHECK(parsed.consumed <= size);
    const std::string_view taken = buffer.substr(0, parsed.consumed);
    MOAT_FUZZ_CHECK(request.header_count <= moat::http::Request::kMaxHeaders);
    MOAT_FUZZ_CHECK(inside(request.method, taken) && inside(request.target, taken) &&
                    inside(request.path, taken) && inside(request.query, taken) &&
                    inside(request.body, taken));
    MOAT_FUZZ_CHECK(request.body.size() <= limits.max_body_bytes);
    for (std::size_t i = 0; i < request.header_count; ++i) {
        MOAT_FUZZ_CHECK(inside(request.headers[i].name, taken) &&
                        inside(request.headers[i].value, taken));
    }
    moat::http::Request again;
    const moat::http::Parsed second = moat::http::parse_request(taken, again, limits);
    MOAT_FUZZ_CHECK(second.state == moat::http::Parsed::State::complete &&
                    second.consumed == parsed.consumed && again.target == request.target &&
                    again.header_count == request.header_count && again.body == request.body);
    for (const std::size_t cut : {parsed.consumed - 1, parsed.consumed / 2, std::size_t{1}}) {
        if (cut < parsed.consumed) {
            moat::http::Request part;
            MOAT_FUZZ_CHECK(moat::http::parse_request(taken.substr(0, cut), part, limits).state ==
                            moat::http::Parsed::State::incomplete);
        }
    }
    return 0;
}
