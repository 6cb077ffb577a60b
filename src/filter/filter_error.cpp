#include "moat/filter/filter_error.hpp"

#include <string>

namespace moat::filter {

const char* reason(Errc code) noexcept {
    switch (code) {
        case Errc::too_many_lists: return "more lists than a snapshot can index";
        case Errc::too_many_rules: return "more rules than a hash table can hold";
        case Errc::regex_set: return "the regex rules exceed RE2's memory budget";
        case Errc::bad_list: return "list handle not open";
    }
    return "unknown filter error";
}

namespace {
class FilterCategory final : public std::error_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "moat.filter"; }
    [[nodiscard]] std::string message(int code) const override {
        return reason(static_cast<Errc>(code));
    }
};
}  // namespace

const std::error_category& filter_category() noexcept {
    static const FilterCategory kCategory;
    return kCategory;
}

}  // namespace moat::filter
