package testenv

import (
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CelebAAttributes are the 40 attribute names of list_attr_celeba.txt, in
// its order.
var CelebAAttributes = strings.Fields(`5_o_Clock_Shadow Arched_Eyebrows Attractive Bags_Under_Eyes Bald Bangs Big_Lips Big_Nose
Black_Hair Blond_Hair Blurry Brown_Hair Bushy_Eyebrows Chubby Double_Chin Eyeglasses Goatee Gray_Hair Heavy_Makeup
High_Cheekbones Male Mouth_Slightly_Open Mustache Narrow_Eyes No_Beard Oval_Face Pale_Skin Pointy_Nose Receding_Hairline
Rosy_Cheeks Sideburns Smiling Straight_Hair Wavy_Hair Wearing_Earrings Wearing_Hat Wearing_Lipstick Wearing_Necklace
Wearing_Necktie Young`)

// CelebAFixture writes n images in CelebA's official layout under
// root/celeba and returns root, to use as a data directory:
// img_align_celeba/000001.jpg …, list_attr_celeba.txt (count line, names
// line, one row per image padded with spaces as the official file is) and
// list_eval_partition.txt (CRLF line ends, as the official file has).
// Image i is a solid colour (10i mod 256, 200, 255 − 10i mod 256), 22×18
// like CelebA's 218×178 scaled down; attribute a of image i is 1 when
// i+a is even; the splits cycle train, train, train, valid, test. edit, if
// not nil, may change the text files' lines before they are written.
func CelebAFixture(t testing.TB, n int, edit func(attr, part []string) ([]string, []string)) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "celeba")
	if err := os.MkdirAll(filepath.Join(dir, "img_align_celeba"), 0o755); err != nil {
		t.Fatal(err)
	}
	attr := []string{fmt.Sprint(n), strings.Join(CelebAAttributes, " ")}
	var part []string
	for i := range n {
		name := fmt.Sprintf("%06d.jpg", i+1)
		img := image.NewRGBA(image.Rect(0, 0, 18, 22))
		rgb := [3]uint8{uint8(10 * i % 256), 200, uint8(255 - 10*i%256)}
		for p := 0; p < len(img.Pix); p += 4 {
			img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = rgb[0], rgb[1], rgb[2], 255
		}
		f, err := os.Create(filepath.Join(dir, "img_align_celeba", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := jpeg.Encode(f, img, &jpeg.Options{Quality: 95}); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		row := name
		for a := range CelebAAttributes {
			// The official file pads with spaces: "000001.jpg -1  1  1 -1".
			if (i+a)%2 == 0 {
				row += "  1"
			} else {
				row += " -1"
			}
		}
		attr = append(attr, row)
		part = append(part, fmt.Sprintf("%s %d", name, []int{0, 0, 0, 1, 2}[i%5]))
	}
	if edit != nil {
		attr, part = edit(attr, part)
	}
	for _, f := range []struct {
		name, text string
	}{
		{"list_attr_celeba.txt", strings.Join(attr, "\n") + "\n"},
		{"list_eval_partition.txt", strings.Join(part, "\r\n") + "\r\n"},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
