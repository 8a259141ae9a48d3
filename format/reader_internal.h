/* reader_internal — the reader's state. Private to format/. */
#ifndef TPP_READER_INTERNAL_H
#define TPP_READER_INTERNAL_H

#include "tpp_format.h"

struct tpp_reader {
	char path[512];
	char msg[640];
	char first_damage_msg[640];
	int fd;
	uint64_t data_start;
	struct tpp_file_info info;
	struct tpp_type *type_by_id[TPP_MAX_TYPES];
	size_t types_cap;
	struct tpp_chunk *chunks;
	size_t nchunks, cap;
	struct tpp_stream_info *streams;
	size_t nstreams, streams_cap;
	struct tpp_meta meta;
	struct tpp_clock clock;             /* built by load_meta */
	struct tpp_clock_sample hdr_clock;  /* the header's offset, mono_ns 0 if not said */
	size_t caps[5]; /* capacities of meta's arrays */
	uint8_t *scratch;
	size_t scap;
};

int rfail(struct tpp_reader *r, int err, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int parse_header(struct tpp_reader *r, const uint8_t *p, size_t n);
int load_meta(struct tpp_reader *r);
void free_header(struct tpp_reader *r);
void free_meta(struct tpp_reader *r);

#endif
