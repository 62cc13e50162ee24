package files

// A row's identity is what joins a prediction back to the user's row:
// the id column (Description.ID, Options.ID, or one named "id") where
// the spec has one, else the unnamed first column that pandas' to_csv
// (the frame's index) and R's write.csv (the row names) write.

// indexIDName is the name the row identifiers taken from an unnamed
// index column go by in predict's outputs.
const indexIDName = "id"

// idColumn is the header position of the column that identifies lay's
// rows, or -1: the id column, else, where the schema names none, the
// unnamed index.
func (lay *layout) idColumn(sc *schema) int {
	switch {
	case lay.id >= 0:
		return lay.id
	case sc.id == "" && lay.indexed:
		return 0
	}
	return -1
}

// IDName is the name of the inputs' row identifiers (Set.IDs): the id
// column's, that of an unnamed index, or "" where the rows have none.
func (in *Inputs) IDName() string {
	switch {
	case in.spec.ID != "":
		return in.spec.ID
	case in.csv != nil && in.csv.lay.idColumn(in.csv.sc) >= 0:
		return indexIDName
	}
	return ""
}
