/* What the C driver needs of JSON: reading the plan (PUBPROOF_PLAN) into a tree, and
 * writing one line of the driver protocol with its strings escaped.
 *
 * Reading: RFC 8259 values (objects, arrays, strings with every escape, surrogate pairs
 * joined, numbers, true, false, null); a string is kept as UTF-8 with its length (\u0000
 * may be inside it). The tree lives until the process ends: the plan is read once.
 *
 * Writing: a growing buffer; json_string() writes bytes as a JSON string that is valid
 * UTF-8 whatever the bytes were (control characters escaped, each byte of an ill-formed
 * sequence written as U+FFFD, as Python's errors="replace" reads it), since a topic name
 * the library hands the application may be anything the server sent.
 */
#ifndef PUBPROOF_PAHO_C_JSON_H
#define PUBPROOF_PAHO_C_JSON_H

#include <stddef.h>

enum json_type { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

typedef struct json_value {
	enum json_type type;
	double number;             /* JSON_NUMBER */
	char *string;              /* JSON_STRING: UTF-8, NUL-terminated */
	size_t length;             /* JSON_STRING: bytes without the terminating NUL */
	struct json_value *items;  /* JSON_ARRAY, JSON_OBJECT: the values, in order */
	char **keys;               /* JSON_OBJECT: the names, beside the values */
	size_t count;              /* JSON_ARRAY, JSON_OBJECT: how many */
} json_value;

/* The value of `text`, or NULL with why it is not JSON (and the byte offset) in `why`. */
json_value *json_parse(const char *text, char *why, size_t why_size);
/* The member `key` of an object; NULL when absent or `object` is not an object. */
const json_value *json_get(const json_value *object, const char *key);
/* Whether `value` is true (JSON true, or a number other than 0). */
int json_truthy(const json_value *value);
/* A number as an int; `otherwise` when absent or not a number. */
long json_int(const json_value *value, long otherwise);

typedef struct json_out {
	char *data;
	size_t length, capacity;
} json_out;

void json_raw(json_out *out, const char *text);
void json_string(json_out *out, const char *bytes, size_t length);
void json_long(json_out *out, long number);
void json_hex(json_out *out, const unsigned char *bytes, size_t length);
void json_free(json_out *out);

#endif
