/* printfmt — the kernel's print formats in the file, and the flag and symbol
 * tables read out of them (decoders/printfmt.c, postproc/out/pfmt_text.c):
 * tracerec's format-file parser keeps the "print fmt:" text whole; the
 * writer stores it and the reader gives it back; gfp_flags and softirq
 * vectors read as the kernel's trace_print_flags_seq / _symbols_seq print
 * them (the formats below are this kernel's, 6.18, copied from tracefs);
 * and the parser, which reads untrusted text, holds up against what a
 * damaged or hostile file can put there: every prefix, random bytes,
 * nesting beyond its limit, tables too long, C it does not take.
 * `printfmt DIR` also writes its file into DIR (a fuzz corpus entry). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event_format.h"
#include "fieldfmt.h"
#include "tpp_decode.h"
#include "tpp_test.h"

#define GFP_TABLE                                                                                                      \
	"(REC->gfp_flags) ? __print_flags(REC->gfp_flags, \"|\", {( unsigned long)(((((((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))) | (( gfp_t)((((1UL))) << (1)))) | (( gfp_t)((((1UL))) << (3))) | (( gfp_t)0)) | (( gfp_t)((((1UL))) << (18))) | (( gfp_t)((((1UL))) << (19))) | (( gfp_t)((((1UL))) << (13)))) & ~(( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11))))) | (( gfp_t)((((1UL))) << (10)))), \"GFP_TRANSHUGE\"}, " \
	"{( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))), \"GFP_USER\"}, " \
	"{( unsigned long)(((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7)))) | (( gfp_t)((((1UL))) << (22)))), \"GFP_KERNEL_ACCOUNT\"}, " \
	"{( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7)))), \"GFP_KERNEL\"}, " \
	"{( unsigned long)((( gfp_t)((((1UL))) << (5)))|(( gfp_t)((((1UL))) << (11)))), \"GFP_ATOMIC\"}, " \
	"{( unsigned long)(( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))), \"__GFP_RECLAIM\"}, " \
	"{( unsigned long)(( gfp_t)((((1UL))) << (8))), \"__GFP_ZERO\"}, " \
	"{( unsigned long)(( gfp_t)((((1UL))) << (18))), \"__GFP_COMP\"}, { 0, ((void *)0) } ) : \"none\""

static const char page_alloc_fmt[] =
	"name: mm_page_alloc\nID: 653\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned int order;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long gfp_flags;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:int migratetype;\toffset:32;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"page=%p pfn=0x%lx order=%d migratetype=%d gfp_flags=%s\", REC->pfn != -1UL ? "
	"(((struct page *)vmemmap_base) + (REC->pfn)) : ((void *)0), REC->pfn != -1UL ? REC->pfn : 0, "
	"REC->order, REC->migratetype, " GFP_TABLE "\n";

static const char softirq_pf[] =
	"\"vec=%u [action=%s]\", REC->vec, __print_symbolic(REC->vec, { 0, \"HI\" }, { 1, \"TIMER\" }, "
	"{ 2, \"NET_TX\" }, { 3, \"NET_RX\" }, { 4, \"BLOCK\" }, { 5, \"IRQ_POLL\" }, { 6, \"TASKLET\" }, "
	"{ 7, \"SCHED\" }, { 8, \"HRTIMER\" }, { 9, \"RCU\" })";

static struct tpp_field_def pa_f[] = {{"pfn", TPP_F_U64}, {"order", TPP_F_U64}, {"gfp_flags", TPP_F_U64},
				      {"migratetype", TPP_F_S64}};
static struct tpp_field_def si_f[] = {{"vec", TPP_F_U64}};
static const struct tpp_type pa_t = {1, "mm_page_alloc", "kmem", 4, pa_f, NULL};
static const struct tpp_type si_t = {2, "softirq_entry", "irq", 1, si_f, NULL};

/* fmt[0..len) parsed from a buffer of exactly len bytes (no NUL after it:
 * a read past the end is the sanitizer's to see). */
static struct tpp_pfmt *parse(const struct tpp_type *t, const char *fmt, size_t len)
{
	char *b = malloc(len ? len : 1);
	memcpy(b, fmt, len);
	struct tpp_pfmt *p = NULL;
	int rc = tpp_pfmt_parse(t, b, len, &p);
	CHECK(rc == 0, "parse rc %d", rc);
	free(b);
	return p;
}

static int reads(const struct tpp_pfield *f, uint64_t v, const char *want)
{
	char buf[512];
	size_t n = ff_pf_text(buf, sizeof(buf), f, v);
	if (!want)
		return n == 0;
	if (n != strlen(want) || strcmp(buf, want)) {
		fprintf(stderr, "  0x%llx reads \"%s\", want \"%s\"\n", (unsigned long long)v, n ? buf : "", want);
		return 0;
	}
	return 1;
}

static void kernel_tables(void)
{
	struct ef_event ev;
	CHECK(ef_parse(page_alloc_fmt, &ev) == 0 && ev.print_fmt, "ef_parse keeps the print format");
	const char *pf = ev.print_fmt ? ev.print_fmt : "";
	CHECK(!strncmp(pf, "\"page=%p", 8) && strstr(pf, ") : \"none\"") && !strchr(pf, '\n'),
	      "the whole line, and only it: %.40s", pf);
	struct tpp_pfmt *p = parse(&pa_t, pf, strlen(pf));
	const struct tpp_pfield *g = p ? p->f[2] : NULL;
	CHECK(g && g->flags && g->n == 8 && !strcmp(g->delim, "|") && g->zero && !strcmp(g->zero, "none"),
	      "gfp_flags: a set of 8 names joined by |, none for 0");
	CHECK(p && !p->f[0] && !p->f[1] && !p->f[3], "no table for the other fields");
	if (g) {
		/* GFP_KERNEL = __GFP_RECLAIM (bits 10, 11) | __GFP_IO (6) | __GFP_FS (7) */
		CHECK(reads(g, 0xcc0, "GFP_KERNEL"), "GFP_KERNEL");
		CHECK(reads(g, 0xcc0 | 0x100, "GFP_KERNEL|__GFP_ZERO"), "a composite name then a bit");
		CHECK(reads(g, 0x400cc0 | 0x100 | 0x40000, "GFP_KERNEL_ACCOUNT|__GFP_ZERO|__GFP_COMP"),
		      "the first name whose bits are all set wins, in the format's order");
		CHECK(reads(g, 0xcc0 | (1ull << 40), "GFP_KERNEL|0x10000000000"), "bits no name covers, last in hex");
		CHECK(reads(g, 1ull << 40, "0x10000000000"), "only unknown bits");
		CHECK(reads(g, 0, "none"), "0 as the format's ternary says");
		char small[12];
		CHECK(ff_pf_text(small, sizeof(small), g, 0xdc0) == 0, "a short buffer gives 0: the number is printed");
	}
	tpp_pfmt_free(p);
	ef_release(&ev);
	CHECK(!ev.print_fmt, "released");

	p = parse(&si_t, softirq_pf, strlen(softirq_pf));
	const struct tpp_pfield *s = p ? p->f[0] : NULL;
	CHECK(s && !s->flags && s->n == 10, "softirq vec: 10 symbols");
	if (s) {
		CHECK(reads(s, 1, "TIMER") && reads(s, 9, "RCU") && reads(s, 0, "HI"), "vectors by name");
		CHECK(reads(s, 42, "0x2a"), "a value without a name, in hex as the kernel prints it");
	}
	tpp_pfmt_free(p);
}

/* What the evaluator takes, and what drops a table. */
static void subset(void)
{
	static const struct {
		const char *fmt;
		uint64_t v;
		const char *want; /* NULL: no table */
	} cases[] = {
		{"__print_symbolic(REC->vec, { 0x10, \"A\" }, { 010, \"B\" })", 8, "B"},
		{"__print_symbolic(REC->vec, { (1U << 31) | 1, \"HI\" })", 0x80000001u, "HI"},
		{"__print_symbolic(REC->vec, { -1, \"NEG\" })", ~0ull, "NEG"},
		{"__print_symbolic(REC->vec, { (int)-1, \"NEG32\" })", ~0ull, "NEG32"},
		{"__print_symbolic(REC->vec, { (unsigned int)-1, \"U32\" })", 0xffffffffu, "U32"},
		{"__print_symbolic(REC->vec, { (u8)0x1ff, \"U8\" })", 0xff, "U8"},
		{"__print_symbolic(REC->vec, { (unsigned)-1, \"U\" })", 0xffffffffu, "U"},
		{"__print_symbolic(REC->vec, { (__s16)0xffff, \"S16\" })", ~0ull, "S16"},
		{"__print_symbolic(REC->vec, { 2 + 3 * 4, \"P\" })", 14, "P"},
		{"__print_symbolic(REC->vec, { (2 + 3) * 4 - 6 / 2 % 2, \"Q\" })", 19, "Q"},
		{"__print_symbolic(REC->vec, { !0 && 1 || 0, \"L\" })", 1, "L"},
		{"__print_symbolic(REC->vec, { ~0ULL ^ 0xf, \"X\" })", ~0xfull, "X"},
		{"__print_symbolic((unsigned long)(REC->vec), { 3, \"CAST\" })", 3, "CAST"},
		{"__print_symbolic_u64(REC->vec, { 3, \"U64\" })", 3, "U64"},
		{"__print_symbolic(REC->vec, { 1, \"a\\\"q\" \"cat\" })", 1, "a\"qcat"},
		{"__print_flags_u64(REC->vec, \" \", { 1, \"A\" }, { 2, \"B\" })", 3, "A B"},
		/* refused: unresolved enum, division by 0, shift past 64, an
		 * expression of the field, an unknown field, a string value, a
		 * cut table, an empty one, a bad number */
		{"__print_symbolic(REC->vec, { SOME_ENUM, \"E\" })", 0, NULL},
		{"__print_symbolic(REC->vec, { 1 / 0, \"Z\" })", 0, NULL},
		{"__print_symbolic(REC->vec, { 1 << 64, \"S\" })", 0, NULL},
		{"__print_symbolic(REC->vec & 3, { 1, \"A\" })", 1, NULL},
		{"__print_symbolic(REC->nope, { 1, \"A\" })", 1, NULL},
		{"__print_symbolic(REC->vec, { \"1\", \"A\" })", 1, NULL},
		{"__print_symbolic(REC->vec, { 1, \"A\" }, { 2, ", 1, NULL},
		{"__print_symbolic(REC->vec)", 1, NULL},
		{"__print_symbolic(REC->vec, { 0x, \"A\" })", 0, NULL},
		{"__print_symbolic(REC->vec, { 1f, \"A\" })", 1, NULL},
		{"__print_symbolic(REC->vec, { 1 ? 2 : 3, \"T\" })", 2, NULL},
		{"\"__print_symbolic(REC->vec, { 1, \\\"A\\\" })\"", 1, NULL}, /* inside a string */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tpp_pfmt *p = parse(&si_t, cases[i].fmt, strlen(cases[i].fmt));
		const struct tpp_pfield *f = p ? p->f[0] : NULL;
		if (cases[i].want)
			CHECK(f && reads(f, cases[i].v, cases[i].want), "case %zu: %s", i, cases[i].fmt);
		else
			CHECK(!f, "case %zu refused: %s", i, cases[i].fmt);
		tpp_pfmt_free(p);
	}
	/* a second table of the same field: the first holds */
	const char *two = "__print_symbolic(REC->vec, { 1, \"FIRST\" }), __print_symbolic(REC->vec, { 1, \"SECOND\" })";
	struct tpp_pfmt *p = parse(&si_t, two, strlen(two));
	CHECK(p && p->f[0] && reads(p->f[0], 1, "FIRST"), "first table wins");
	tpp_pfmt_free(p);
}

/* Untrusted text: limits hold, nothing is read past the end. */
static void hostile(void)
{
	size_t big = 200000;
	char *s = malloc(big + 64);
	/* nesting far beyond the evaluator's depth */
	size_t n = (size_t)sprintf(s, "__print_symbolic(REC->vec, { ");
	for (size_t i = 0; i < 50000; i++)
		s[n++] = '(';
	n += (size_t)sprintf(s + n, "1");
	for (size_t i = 0; i < 50000; i++)
		s[n++] = ')';
	n += (size_t)sprintf(s + n, ", \"DEEP\" })");
	struct tpp_pfmt *p = parse(&si_t, s, n);
	CHECK(!p || !p->f[0], "nesting past the limit drops the table");
	tpp_pfmt_free(p);
	/* as deep as the kernel's gfp masks go, and a bit more: taken */
	n = (size_t)sprintf(s, "__print_symbolic(REC->vec, { ");
	for (size_t i = 0; i < 30; i++)
		n += (size_t)sprintf(s + n, "(( unsigned long)");
	n += (size_t)sprintf(s + n, "7");
	for (size_t i = 0; i < 30; i++)
		n += (size_t)sprintf(s + n, ")");
	n += (size_t)sprintf(s + n, ", \"OK\" })");
	p = parse(&si_t, s, n);
	CHECK(p && p->f[0] && reads(p->f[0], 7, "OK"), "30 nested casts are taken");
	tpp_pfmt_free(p);
	/* a table longer than the limit */
	n = (size_t)sprintf(s, "__print_symbolic(REC->vec");
	for (int i = 0; i < 1100; i++)
		n += (size_t)sprintf(s + n, ", { %d, \"N%d\" }", i, i);
	n += (size_t)sprintf(s + n, ")");
	p = parse(&si_t, s, n);
	CHECK(!p || !p->f[0], "more than 1024 entries drops the table");
	tpp_pfmt_free(p);
	/* a name too long */
	n = (size_t)sprintf(s, "__print_symbolic(REC->vec, { 1, \"");
	memset(s + n, 'x', 500);
	n += 500;
	n += (size_t)sprintf(s + n, "\" })");
	p = parse(&si_t, s, n);
	CHECK(!p || !p->f[0], "a name of 500 bytes drops the table");
	tpp_pfmt_free(p);
	/* names that would reach a terminal as control sequences: the table goes */
	static const char *const esc[] = {
		"__print_symbolic(REC->vec, { 1, \"HI\x1b]0;pwned\x07\" })",
		"__print_symbolic(REC->vec, { 1, \"T\rIMER\" })",
		"__print_symbolic(REC->vec, { 1, \"A\\nB\" })",
		"__print_symbolic(REC->vec, { 1, \"\x9b" "31m\" })",
		"(REC->vec) ? __print_flags(REC->vec, \"\x1b[2J\", { 1, \"A\" }) : \"none\"",
	};
	for (size_t i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
		p = parse(&si_t, esc[i], strlen(esc[i]));
		CHECK(!p || !p->f[0], "control bytes in a name or delimiter drop the table (%zu)", i);
		tpp_pfmt_free(p);
	}
	static const char zesc[] = "(REC->vec) ? __print_flags(REC->vec, \"|\", { 1, \"A\" }) : \"\x1b[31m\"";
	p = parse(&si_t, zesc, strlen(zesc));
	CHECK(p && p->f[0] && !p->f[0]->zero, "a zero text with control bytes is not kept");
	tpp_pfmt_free(p);
	/* unclosed calls, one after another: at most PF_CALLS are looked at,
	 * so the work stays linear in the text (each may scan to its end) */
	n = 0;
	while (n + 40 < big)
		n += (size_t)sprintf(s + n, "__print_flags(REC->vec ");
	p = parse(&si_t, s, n);
	CHECK(!p || !p->f[0], "unclosed calls take nothing");
	tpp_pfmt_free(p);
	n = 0;
	for (int i = 0; i < 40; i++)
		n += (size_t)sprintf(s + n, "__print_flags(REC->nope, \"|\", { 1, \"X\" }) ");
	n += (size_t)sprintf(s + n, "%s", softirq_pf);
	p = parse(&si_t, s, n);
	CHECK(!p || !p->f[0], "a table past the first 32 calls is not looked for");
	tpp_pfmt_free(p);
	/* text over TPP_PFMT_MAX is not read */
	memset(s, ' ', big);
	memcpy(s, softirq_pf, strlen(softirq_pf));
	p = parse(&si_t, s, big);
	CHECK(!p, "a format over TPP_PFMT_MAX is not read");
	tpp_pfmt_free(p);
	free(s);

	/* every prefix of the real gfp format, and random damage to it */
	struct ef_event ev;
	CHECK(ef_parse(page_alloc_fmt, &ev) == 0, "format parsed");
	const char *pf = ev.print_fmt ? ev.print_fmt : "";
	size_t len = strlen(pf), whole = 0;
	for (size_t k = 0; k <= len; k++) {
		p = parse(&pa_t, pf, k);
		whole += p && p->f[2];
		tpp_pfmt_free(p);
	}
	CHECK(whole >= 1, "the whole format reads (%zu prefixes did)", whole);
	char *m = malloc(len);
	for (int round = 0; round < 3000; round++) {
		memcpy(m, pf, len);
		for (int j = 0; j < 1 + (int)(rnd() % 4); j++)
			m[rnd() % len] = (char)(rnd() % 3 ? "(){}\",|<>~-!0x1UL \\"[rnd() % 19] : (char)rnd());
		p = parse(&pa_t, m, len);
		if (p && p->f[2]) {
			char buf[512];
			ff_pf_text(buf, sizeof(buf), p->f[2], rnd());
		}
		tpp_pfmt_free(p);
	}
	free(m);
	ef_release(&ev);
}

/* Writer to reader: the text comes back, and a type without one reads as before. */
static void in_the_file(const char *corpus_dir)
{
	char path[] = "/tmp/tpp-printfmt-XXXXXX";
	close(mkstemp(path));
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o)};
	CHECK(tpp_w_open(&w, path, &o) == 0, "open");
	struct tpp_type_def d1 = {1, "mm_page_alloc", "kmem", 4, pa_f}, d2 = {2, "softirq_entry", "irq", 1, si_f},
			    d3 = {3, "plain", "x", 1, si_f};
	const char *gfp = strstr(page_alloc_fmt, "print fmt: ") + 11;
	char *gfp_line = strndup(gfp, strcspn(gfp, "\n"));
	CHECK(tpp_w_add_type_fmt(w, &d1, gfp_line) == 0 && tpp_w_add_type_fmt(w, &d2, softirq_pf) == 0 &&
		      tpp_w_add_type(w, &d3) == 0 && tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1) == 0,
	      "types");
	union tpp_val v[4] = {{.u = 4096}, {.u = 0}, {.u = 0xdc0}, {.i = 1}};
	union tpp_val sv = {.u = 9};
	CHECK(tpp_w_event(w, 0, 1, 100, 7, v) == 0 && tpp_w_event(w, 0, 2, 200, 7, &sv) == 0 &&
		      tpp_w_event(w, 0, 3, 300, 7, &sv) == 0,
	      "events");
	/* a type defined late travels in a metadata record: it carries its text too */
	struct tpp_type_def d4 = {4, "late", "irq", 1, si_f};
	CHECK(tpp_w_add_type_fmt(w, &d4, softirq_pf) == 0 && tpp_w_event(w, 0, 4, 400, 7, &sv) == 0, "late type");
	CHECK(tpp_w_close(w) == 0, "close");
	struct tpp_reader *r;
	char err[256];
	CHECK(tpp_r_open(&r, path, err, sizeof(err)) == 0, "reopen: %s", err);
	if (r) {
		const struct tpp_file_info *fi = tpp_r_info(r);
		CHECK(fi->major == 1 && fi->minor == 2, "format 1.2");
		const struct tpp_type *t1 = tpp_r_type(r, 1), *t3 = tpp_r_type(r, 3), *t4 = tpp_r_type(r, 4);
		CHECK(t1 && t1->print_fmt && !strcmp(t1->print_fmt, gfp_line), "print fmt back byte for byte");
		CHECK(t3 && !t3->print_fmt, "a type without one has none");
		CHECK(t4 && t4->print_fmt && !strcmp(t4->print_fmt, softirq_pf), "a late type's too");
		struct tpp_names *nm = NULL;
		CHECK(tpp_names_open(&nm, r) == 0, "names");
		const struct tpp_pfield *g = tpp_names_pfield(nm, 1, 2), *sv4 = tpp_names_pfield(nm, 4, 0);
		CHECK(g && reads(g, 0xdc0, "GFP_KERNEL|__GFP_ZERO"), "gfp_flags through the file");
		CHECK(sv4 && reads(sv4, 9, "RCU"), "a late type's table");
		CHECK(!tpp_names_pfield(nm, 3, 0) && !tpp_names_pfield(nm, 1, 0) && !tpp_names_pfield(nm, 99, 0) &&
			      !tpp_names_pfield(nm, 1, 40),
		      "none where there is none");
		tpp_names_close(nm);
		tpp_r_close(r);
	}
	if (corpus_dir) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s/printfmt-types.tpp'", path, corpus_dir);
		CHECK(system(cmd) == 0, "corpus entry");
	}
	free(gfp_line);
	unlink(path);
}

int main(int argc, char **argv)
{
	kernel_tables();
	subset();
	hostile();
	in_the_file(argc > 1 ? argv[1] : NULL);
	TEST_DONE();
}
