/* JSON for the C driver: the plan read into a tree, protocol lines written (json.h). */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* deeper than any plan: a bound so that no input can exhaust the stack */
#define MAX_DEPTH 64

struct reader {
	const char *start, *at;
	char *why;
	size_t why_size;
};

static void *need(void *pointer)
{
	if (pointer == NULL) {
		fputs("pubproof paho-c driver: out of memory\n", stderr);
		exit(70);
	}
	return pointer;
}

static int fail(struct reader *r, const char *what)
{
	if (r->why[0] == '\0')
		snprintf(r->why, r->why_size, "%s at byte %ld", what, (long)(r->at - r->start));
	return -1;
}

static void skip_space(struct reader *r)
{
	while (*r->at == ' ' || *r->at == '\t' || *r->at == '\n' || *r->at == '\r')
		r->at++;
}

static void put(json_out *out, const char *bytes, size_t length);
static void put_utf8(json_out *out, unsigned long code);

static int hex4(struct reader *r, unsigned long *code)
{
	*code = 0;
	for (int i = 0; i < 4; i++) {
		char c = *r->at++;
		int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (digit < 0)
			return fail(r, "a \\u escape needs four hex digits");
		*code = *code * 16 + (unsigned long)digit;
	}
	return 0;
}

static int parse_string(struct reader *r, json_value *v)
{
	json_out text = {0};
	r->at++; /* the opening quote */
	for (;;) {
		unsigned char c = (unsigned char)*r->at;
		if (c == '"')
			break;
		if (c == '\0')
			return json_free(&text), fail(r, "a string without its closing quote");
		if (c < 0x20)
			return json_free(&text), fail(r, "a control character inside a string");
		r->at++;
		if (c != '\\') {
			put(&text, (const char *)&c, 1);
			continue;
		}
		char e = *r->at++;
		const char *simple = strchr("\"\\/bfnrt", e);
		if (e != '\0' && simple != NULL) {
			put(&text, &"\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"], 1);
			continue;
		}
		if (e != 'u')
			return json_free(&text), fail(r, "an unknown escape in a string");
		unsigned long code, low;
		if (hex4(r, &code) < 0)
			return json_free(&text), -1;
		/* a high surrogate followed by a low one is one code point (RFC 8259 section 7) */
		if (code >= 0xD800 && code < 0xDC00 && r->at[0] == '\\' && r->at[1] == 'u') {
			const char *back = r->at;
			r->at += 2;
			if (hex4(r, &low) < 0)
				return json_free(&text), -1;
			if (low >= 0xDC00 && low < 0xE000)
				code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
			else
				r->at = back;
		}
		put_utf8(&text, code); /* \u0000 too: a NUL byte inside the string, counted */
	}
	r->at++; /* the closing quote */
	json_raw(&text, "");
	v->type = JSON_STRING;
	v->string = text.data;
	v->length = text.length;
	return 0;
}

static int parse_value(struct reader *r, json_value *v, int depth);

static int parse_list(struct reader *r, json_value *v, int depth, int object)
{
	char close = object ? '}' : ']';
	size_t capacity = 0;
	v->type = object ? JSON_OBJECT : JSON_ARRAY;
	r->at++;
	skip_space(r);
	if (*r->at == close) {
		r->at++;
		return 0;
	}
	for (;;) {
		if (v->count == capacity) {
			capacity = capacity ? capacity * 2 : 4;
			v->items = need(realloc(v->items, capacity * sizeof *v->items));
			if (object)
				v->keys = need(realloc(v->keys, capacity * sizeof *v->keys));
		}
		json_value *item = &v->items[v->count];
		memset(item, 0, sizeof *item);
		skip_space(r);
		if (object) {
			json_value key = {0};
			if (*r->at != '"')
				return fail(r, "an object's member must start with its name");
			if (parse_string(r, &key) < 0)
				return -1;
			v->keys[v->count] = key.string;
			skip_space(r);
			if (*r->at++ != ':')
				return r->at--, fail(r, "a ':' after the member's name");
		}
		if (parse_value(r, item, depth + 1) < 0)
			return -1;
		v->count++;
		skip_space(r);
		if (*r->at == ',') {
			r->at++;
			continue;
		}
		if (*r->at == close) {
			r->at++;
			return 0;
		}
		return fail(r, object ? "',' or '}' expected" : "',' or ']' expected");
	}
}

static int parse_value(struct reader *r, json_value *v, int depth)
{
	if (depth > MAX_DEPTH)
		return fail(r, "nested too deep");
	skip_space(r);
	char c = *r->at;
	if (c == '{' || c == '[')
		return parse_list(r, v, depth, c == '{');
	if (c == '"')
		return parse_string(r, v);
	static const struct { const char *word; enum json_type type; } words[] = {
		{"true", JSON_TRUE}, {"false", JSON_FALSE}, {"null", JSON_NULL}};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
		size_t n = strlen(words[i].word);
		if (strncmp(r->at, words[i].word, n) == 0) {
			r->at += n;
			v->type = words[i].type;
			return 0;
		}
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		char *end;
		v->number = strtod(r->at, &end);
		if (end == r->at)
			return fail(r, "a number expected");
		r->at = end;
		v->type = JSON_NUMBER;
		return 0;
	}
	return fail(r, "a JSON value expected");
}

json_value *json_parse(const char *text, char *why, size_t why_size)
{
	struct reader r = {text, text, why, why_size};
	json_value *v = need(calloc(1, sizeof *v));
	why[0] = '\0';
	if (parse_value(&r, v, 0) < 0)
		return NULL;
	skip_space(&r);
	if (*r.at != '\0') {
		fail(&r, "text after the JSON value");
		return NULL;
	}
	return v;
}

const json_value *json_get(const json_value *object, const char *key)
{
	if (object == NULL || object->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < object->count; i++)
		if (strcmp(object->keys[i], key) == 0)
			return &object->items[i];
	return NULL;
}

int json_truthy(const json_value *value)
{
	return value != NULL && (value->type == JSON_TRUE || (value->type == JSON_NUMBER && value->number != 0));
}

long json_int(const json_value *value, long otherwise)
{
	return value != NULL && value->type == JSON_NUMBER ? (long)value->number : otherwise;
}

/* -- writing --------------------------------------------------------------------------- */

static void grow(json_out *out, size_t more)
{
	if (out->length + more + 1 <= out->capacity)
		return;
	size_t capacity = out->capacity ? out->capacity : 256;
	while (out->length + more + 1 > capacity)
		capacity *= 2;
	out->data = need(realloc(out->data, capacity));
	out->capacity = capacity;
}

static void put(json_out *out, const char *bytes, size_t length)
{
	grow(out, length);
	memcpy(out->data + out->length, bytes, length);
	out->length += length;
	out->data[out->length] = '\0';
}

void json_raw(json_out *out, const char *text)
{
	put(out, text, strlen(text));
}

static void put_utf8(json_out *out, unsigned long code)
{
	char b[4];
	size_t n;
	if (code < 0x80) {
		b[0] = (char)code, n = 1;
	} else if (code < 0x800) {
		b[0] = (char)(0xC0 | code >> 6), b[1] = (char)(0x80 | (code & 0x3F)), n = 2;
	} else if (code < 0x10000) {
		b[0] = (char)(0xE0 | code >> 12), b[1] = (char)(0x80 | ((code >> 6) & 0x3F));
		b[2] = (char)(0x80 | (code & 0x3F)), n = 3;
	} else {
		b[0] = (char)(0xF0 | code >> 18), b[1] = (char)(0x80 | ((code >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((code >> 6) & 0x3F)), b[3] = (char)(0x80 | (code & 0x3F)), n = 4;
	}
	put(out, b, n);
}

/* The length of the well-formed UTF-8 sequence at `s` (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when it is ill-formed. */
static size_t utf8_sequence(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n;
	unsigned long code, least;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, code = c & 0x1F, least = 0x80;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, code = c & 0x0F, least = 0x800;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, code = c & 0x07, least = 0x10000;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		code = code << 6 | (s[i] & 0x3F);
	}
	if (code < least || code > 0x10FFFF || (code >= 0xD800 && code < 0xE000))
		return 0;
	return n;
}

void json_string(json_out *out, const char *bytes, size_t length)
{
	const unsigned char *s = (const unsigned char *)bytes;
	json_raw(out, "\"");
	for (size_t i = 0; i < length;) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			char escaped[3] = {'\\', (char)c, '\0'};
			json_raw(out, escaped);
			i++;
		} else if (c < 0x20 || c == 0x7F) {
			char escaped[8];
			snprintf(escaped, sizeof escaped, "\\u%04x", c);
			json_raw(out, escaped);
			i++;
		} else {
			size_t n = utf8_sequence(s + i, length - i);
			if (n == 0) {
				json_raw(out, "\\ufffd");
				i++;
			} else {
				put(out, bytes + i, n);
				i += n;
			}
		}
	}
	json_raw(out, "\"");
}

void json_long(json_out *out, long number)
{
	char text[32];
	snprintf(text, sizeof text, "%ld", number);
	json_raw(out, text);
}

void json_hex(json_out *out, const unsigned char *bytes, size_t length)
{
	static const char digits[] = "0123456789abcdef";
	grow(out, 2 * length + 2);
	out->data[out->length++] = '"';
	for (size_t i = 0; i < length; i++) {
		out->data[out->length++] = digits[bytes[i] >> 4];
		out->data[out->length++] = digits[bytes[i] & 0x0F];
	}
	out->data[out->length++] = '"';
	out->data[out->length] = '\0';
}

void json_free(json_out *out)
{
	free(out->data);
	out->data = NULL;
	out->length = out->capacity = 0;
}
