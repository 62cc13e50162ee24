package files

// A text column with a value of its own in nearly every row (a date, a
// name, a free-text comment) is no category: one-hot encoded it only
// memorises the training rows, and the first new value stops
// prediction. Such a column is refused by name unless tasks.json lists
// it as categorical.

// Near-unique text columns: at least nearUniqueMin distinct values, and
// distinct values in at least nearUniqueShare of the non-missing cells.
const (
	nearUniqueMin   = 20
	nearUniqueShare = 0.9
)

// checkNearUnique refuses an input column of text (not listed as
// categorical) whose values are nearly all distinct (more than
// MaxCategories is refused as too many categories).
func checkNearUnique(path, name string, col *column) error {
	values := col.numbers + col.text
	distinct := len(col.distinct)
	if distinct < nearUniqueMin || distinct > MaxCategories || float64(distinct) < nearUniqueShare*float64(values) {
		return nil
	}
	return csvError(path, "column %q has a distinct value in nearly every row (%d distinct of %d; line %d: %s): an identifier, a date or free text, whose categories would only memorise the training rows; list it in tasks.json's \"ignore\", name it as the \"id\", or list it in \"categorical\" to encode it all the same",
		name, distinct, values, col.textLine, short(col.firstText))
}
