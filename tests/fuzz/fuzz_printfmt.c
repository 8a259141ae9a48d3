/* libFuzzer target for the print-format parser (decoders/printfmt.c), the
 * part of the reader that evaluates C out of a file: any byte string is a
 * type's print_fmt, parsed against fields named as the kernel's events name
 * them, and every table it yields formatted (`make fuzz`). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fieldfmt.h"
#include "tpp_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tpp_field_def f[] = {{"gfp_flags", TPP_F_U64}, {"vec", TPP_F_U64}, {"reason", TPP_F_S64},
					   {"name", TPP_F_STR}};
	static const struct tpp_type t = {1, "fuzz", "fuzz", 4, f, NULL};
	struct tpp_pfmt *p = NULL;
	if (tpp_pfmt_parse(&t, (const char *)data, size, &p) || !p)
		return 0;
	char buf[512];
	uint64_t v = size >= 8 ? (uint64_t)data[0] << 56 | (uint64_t)data[size - 1] : size;
	for (unsigned i = 0; i < TPP_MAX_FIELDS; i++)
		if (p->f[i]) {
			ff_pf_text(buf, sizeof(buf), p->f[i], v);
			ff_pf_text(buf, sizeof(buf), p->f[i], 0);
			ff_pf_text(buf, sizeof(buf), p->f[i], ~0ull);
		}
	tpp_pfmt_free(p);
	return 0;
}
