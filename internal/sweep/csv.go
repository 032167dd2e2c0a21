package sweep

import "strconv"

// SafeCSV makes CSV cells safe to open in a spreadsheet (the OWASP rule):
// a cell beginning with =, +, - (unless it is a number), @, a tab or a
// carriage return gets a leading '. It changes the slice in place and
// returns it.
func SafeCSV(rec []string) []string {
	for i, c := range rec {
		if c == "" {
			continue
		}
		switch c[0] {
		case '=', '@', '\t', '\r':
			rec[i] = "'" + c
		case '+', '-':
			if _, err := strconv.ParseFloat(c, 64); err != nil {
				rec[i] = "'" + c
			}
		}
	}
	return rec
}
