"""Person names for the synthetic world: realistic frequencies, variants, homonyms and typos.

A person has one *canonical* name (what Scholar Feed shows on the profile) and a few *variants*
that other pages use for the same person:

- given-name joining of two-syllable Chinese / Korean names: ``Junhui`` / ``Jun-Hui`` /
  ``Jun-hui`` / ``JunHui`` (``ChangQing Xu`` in sample 004);
- initials: ``J. Li``, ``J.-H. Li``, ``J. A. Smith``;
- family-first order: ``Li Junhui``, ``Sato Hiroshi``;
- diacritics: ``José García`` / ``Jose Garcia``; German ``Müller`` / ``Mueller``; Japanese long
  vowels ``Satō`` / ``Sato``; Vietnamese ``Nguyễn`` / ``Nguyen``;
- transliteration: ``Alexey`` / ``Aleksei``, ``Mohammad`` / ``Mohammed``;
- middle initial present or not; Spanish double surnames with or without the hyphen.

*Homonyms* (distinct people with the same name) are not injected: they follow from drawing
surnames and given names with their real skewed frequencies (``Wei Zhang``), exactly as in real
bibliographies. *Typos* (``Cheng`` -> ``Chen``) are applied per byline mention by the renderer.

Pure data and functions; every random choice comes from the ``random.Random`` passed in.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------
# Data. Weights are rough population shares among ML / HPC authors; only their ratios matter.
# ---------------------------------------------------------------------------------------------
CHINESE_SURNAMES = (
    ("Wang", 71), ("Li", 70), ("Zhang", 66), ("Liu", 54), ("Chen", 45), ("Yang", 31), ("Huang", 22),
    ("Zhao", 20), ("Wu", 19), ("Zhou", 17), ("Xu", 13), ("Sun", 12), ("Ma", 11), ("Zhu", 10), ("Hu", 9),
    ("Guo", 9), ("He", 8), ("Gao", 8), ("Lin", 8), ("Luo", 7), ("Zheng", 7), ("Liang", 7), ("Xie", 6),
    ("Song", 5), ("Tang", 5), ("Han", 5), ("Feng", 4), ("Deng", 4), ("Cao", 4), ("Peng", 4), ("Zeng", 4),
    ("Xiao", 4), ("Tian", 3), ("Dong", 3), ("Pan", 3), ("Yuan", 3), ("Cai", 3), ("Jiang", 3), ("Yu", 3),
    ("Du", 3), ("Ye", 3), ("Cheng", 3), ("Wei", 3), ("Su", 3), ("Lu", 3), ("Ding", 3), ("Ren", 3),
    ("Shen", 3), ("Yao", 2), ("Jin", 2), ("Fan", 2), ("Fang", 2), ("Shi", 2), ("Liao", 2), ("Zou", 2),
    ("Xiong", 2), ("Qiu", 2), ("Qin", 2), ("Bai", 2), ("Jia", 2), ("Xia", 2), ("Hou", 2), ("Yan", 2),
    ("Niu", 1), ("Kong", 1), ("Mao", 1), ("Long", 1), ("Duan", 1), ("Lei", 1), ("Qian", 1), ("Tan", 1),
    ("Yin", 1), ("Zhan", 1), ("Kang", 1), ("Hao", 1), ("Lai", 1), ("Cui", 1), ("Gu", 1), ("Mo", 1),
    ("Meng", 1), ("Qu", 1), ("Zhong", 1), ("Wen", 1), ("Hong", 1), ("Chang", 1), ("Zan", 1), ("Kan", 1),
)
CHINESE_SYLLABLES = (
    ("wei", 30), ("jun", 22), ("hao", 20), ("yu", 20), ("jie", 18), ("lei", 16), ("xin", 16), ("yang", 15),
    ("jing", 15), ("ming", 14), ("hui", 14), ("li", 13), ("ning", 12), ("tao", 12), ("bo", 12), ("chen", 11),
    ("feng", 11), ("yi", 11), ("kai", 10), ("zhi", 10), ("peng", 10), ("rui", 10), ("hong", 9), ("qiang", 9),
    ("lin", 9), ("hua", 9), ("jian", 9), ("xiao", 8), ("yan", 8), ("ying", 8), ("fei", 8), ("long", 7),
    ("dong", 7), ("fan", 7), ("yun", 7), ("qing", 7), ("xiang", 7), ("cheng", 7), ("hang", 6), ("yuan", 6),
    ("zhe", 6), ("jia", 6), ("tian", 6), ("zi", 6), ("han", 6), ("xu", 5), ("shuo", 5), ("yong", 5),
    ("gang", 5), ("bin", 5), ("chao", 5), ("liang", 5), ("ke", 5), ("ran", 4), ("rong", 4), ("shan", 4),
    ("si", 4), ("tong", 4), ("wen", 4), ("xue", 4), ("yao", 4), ("ze", 4), ("zhen", 4), ("heng", 4),
    ("jin", 4), ("kun", 4), ("meng", 4), ("nan", 3), ("quan", 3), ("sheng", 3), ("shu", 3), ("song", 3),
    ("ting", 3), ("xuan", 3), ("yue", 3), ("zhong", 3), ("an", 3), ("bing", 3), ("chang", 3), ("ding", 2),
    ("guang", 2), ("hai", 2), ("huan", 2), ("kang", 2), ("lan", 2), ("mei", 2), ("min", 2), ("pei", 2),
    ("qi", 2), ("qian", 2), ("shao", 2), ("teng", 2), ("xing", 2), ("ya", 2), ("yin", 2), ("zhao", 2),
    ("zhuo", 2), ("dan", 2), ("fang", 2), ("jiang", 2), ("lian", 2), ("nuo", 1), ("qin", 1), ("sen", 1),
    ("da", 1), ("chu", 1), ("ao", 1), ("ge", 1), ("jue", 1), ("lun", 1), ("miao", 1), ("ou", 1), ("ru", 1),
)
KOREAN_SURNAMES = (
    ("Kim", 21), ("Lee", 15), ("Park", 8), ("Choi", 5), ("Jung", 4), ("Kang", 2), ("Cho", 2), ("Yoon", 2),
    ("Jang", 2), ("Lim", 2), ("Han", 1), ("Oh", 1), ("Seo", 1), ("Shin", 1), ("Kwon", 1), ("Hwang", 1),
    ("Ahn", 1), ("Song", 1), ("Yoo", 1), ("Hong", 1),
)
KOREAN_SYLLABLES = (
    ("min", 6), ("jun", 5), ("seo", 4), ("ji", 5), ("hyun", 5), ("woo", 4), ("young", 4), ("soo", 4),
    ("jae", 4), ("dong", 3), ("sung", 3), ("ho", 3), ("eun", 3), ("hye", 2), ("jin", 3), ("kyung", 2),
    ("sang", 2), ("yeon", 2), ("hoon", 3), ("seung", 3), ("won", 2), ("joon", 2), ("chan", 2), ("tae", 2),
)
JAPANESE_SURNAMES = (
    ("Sato", 8), ("Suzuki", 7), ("Takahashi", 6), ("Tanaka", 6), ("Watanabe", 5), ("Ito", 5),
    ("Yamamoto", 5), ("Nakamura", 5), ("Kobayashi", 4), ("Kato", 4), ("Yoshida", 4), ("Yamada", 4),
    ("Sasaki", 3), ("Yamaguchi", 3), ("Matsumoto", 3), ("Inoue", 3), ("Kimura", 3), ("Hayashi", 3),
    ("Shimizu", 3), ("Saito", 3), ("Ota", 2), ("Kondo", 2),
)
JAPANESE_GIVEN = (
    ("Hiroshi", 3), ("Takeshi", 3), ("Yuki", 4), ("Kenji", 3), ("Daisuke", 3), ("Shota", 3), ("Haruka", 2),
    ("Akira", 3), ("Naoki", 3), ("Ryo", 3), ("Kazuki", 3), ("Yusuke", 3), ("Satoshi", 3), ("Takuya", 3),
    ("Masato", 2), ("Yuto", 2), ("Aya", 2), ("Mai", 2), ("Kenta", 3), ("Tomoya", 2), ("Yota", 1), ("Kohei", 2),
)
# Hepburn long vowels that some pages keep (Satō) and others drop (Sato).
JAPANESE_MACRONS = {
    "Sato": "Satō", "Ito": "Itō", "Kato": "Katō", "Saito": "Saitō", "Ota": "Ōta", "Kondo": "Kondō",
    "Yuki": "Yūki", "Ryo": "Ryō", "Shota": "Shōta", "Yusuke": "Yūsuke", "Yuto": "Yūto", "Yota": "Yōta",
    "Kohei": "Kōhei",
}
VIETNAMESE_SURNAMES = (
    ("Nguyen", "Nguyễn", 38), ("Tran", "Trần", 11), ("Le", "Lê", 9), ("Pham", "Phạm", 7),
    ("Hoang", "Hoàng", 5), ("Huynh", "Huỳnh", 4), ("Phan", "Phan", 4), ("Vu", "Vũ", 4), ("Vo", "Võ", 3),
    ("Dang", "Đặng", 2), ("Bui", "Bùi", 2), ("Do", "Đỗ", 2),
)
VIETNAMESE_GIVEN_PARTS = (
    ("Van", "Văn"), ("Thi", "Thị"), ("Duc", "Đức"), ("Minh", "Minh"), ("Thanh", "Thành"), ("Quang", "Quang"),
    ("Hoang", "Hoàng"), ("Ngoc", "Ngọc"), ("Huu", "Hữu"), ("Xuan", "Xuân"),
)
VIETNAMESE_GIVEN_LAST = (
    ("Anh", "Anh"), ("Hoa", "Hoa"), ("Huy", "Huy"), ("Tuan", "Tuấn"), ("Long", "Long"), ("Khoa", "Khoa"),
    ("Phuong", "Phương"), ("Trung", "Trung"), ("Hieu", "Hiếu"), ("Nam", "Nam"), ("Hung", "Hùng"),
    ("Dung", "Dũng"), ("Linh", "Linh"), ("Lan", "Lan"), ("Mai", "Mai"), ("Son", "Sơn"), ("Tam", "Tâm"),
    ("Thao", "Thảo"), ("Vinh", "Vinh"), ("Hai", "Hải"), ("Bao", "Bảo"), ("Cuong", "Cường"), ("Dat", "Đạt"),
    ("Khanh", "Khánh"), ("Quan", "Quân"), ("Thang", "Thắng"), ("Tien", "Tiến"), ("Viet", "Việt"),
)
VIETNAMESE_GIVEN = (
    ("Van Anh", "Văn Anh", 3), ("Minh", "Minh", 4), ("Thi Hoa", "Thị Hoa", 2), ("Duc", "Đức", 3),
    ("Quang Huy", "Quang Huy", 3), ("Tuan", "Tuấn", 3), ("Thanh", "Thành", 3), ("Hieu", "Hiếu", 2),
    ("Khoa", "Khoa", 2), ("Long", "Long", 2), ("Trung", "Trung", 2), ("Phuong", "Phương", 2),
)
WESTERN_GIVEN = (
    ("James", 5), ("John", 5), ("Robert", 4), ("Michael", 6), ("William", 4), ("David", 6), ("Richard", 3),
    ("Joseph", 3), ("Thomas", 4), ("Daniel", 5), ("Matthew", 4), ("Andrew", 4), ("Christopher", 3),
    ("Mark", 3), ("Paul", 3), ("Steven", 2), ("Kevin", 3), ("Brian", 3), ("Ryan", 3), ("Eric", 3),
    ("Sarah", 3), ("Emily", 3), ("Jessica", 2), ("Jennifer", 2), ("Laura", 2), ("Rachel", 2), ("Anna", 3),
    ("Emma", 2), ("Olivia", 2), ("Sophia", 2), ("Benjamin", 3), ("Samuel", 3), ("Alexander", 3),
    ("Nicholas", 3), ("Jonathan", 3), ("Adam", 2), ("Peter", 3), ("Scott", 2), ("Justin", 2), ("Tyler", 2),
    ("Hannah", 2), ("Rebecca", 2), ("Katherine", 2), ("Elizabeth", 2), ("George", 2), ("Henry", 2),
)
WESTERN_SURNAMES = (
    ("Smith", 10), ("Johnson", 8), ("Williams", 7), ("Brown", 7), ("Jones", 6), ("Miller", 5), ("Davis", 5),
    ("Wilson", 4), ("Anderson", 4), ("Taylor", 4), ("Thomas", 3), ("Moore", 3), ("Jackson", 3), ("Martin", 3),
    ("Lee", 3), ("Thompson", 3), ("White", 3), ("Harris", 3), ("Clark", 3), ("Lewis", 3), ("Robinson", 2),
    ("Walker", 2), ("Young", 2), ("Allen", 2), ("King", 2), ("Wright", 2), ("Scott", 2), ("Hill", 2),
    ("Green", 2), ("Adams", 2), ("Baker", 2), ("Nelson", 2), ("Carter", 2), ("Mitchell", 2), ("Roberts", 2),
    ("Turner", 2), ("Phillips", 2), ("Campbell", 2), ("Parker", 2), ("Evans", 2), ("Edwards", 2),
    ("Collins", 2), ("Stewart", 1), ("Morris", 1), ("Murphy", 1), ("Cook", 1), ("Rogers", 1), ("Morgan", 1),
    ("Cooper", 1), ("Peterson", 1), ("Reed", 1), ("Bailey", 1), ("Kelly", 1), ("Howard", 1), ("Ward", 1),
    ("Richardson", 1), ("Wood", 1), ("Watson", 1), ("Brooks", 1), ("Bennett", 1), ("Gray", 1), ("Hughes", 1),
)
INDIAN_GIVEN = (
    ("Rahul", 4), ("Amit", 4), ("Priya", 3), ("Ankit", 3), ("Vikram", 2), ("Sandeep", 3), ("Arjun", 3),
    ("Deepak", 3), ("Neha", 3), ("Pooja", 2), ("Rohan", 2), ("Siddharth", 3), ("Aditya", 3), ("Karthik", 3),
    ("Ananya", 2), ("Shreya", 2), ("Varun", 2), ("Nikhil", 3), ("Abhishek", 3), ("Saurabh", 2), ("Sanjay", 2),
    ("Harsha", 2), ("Rajesh", 2), ("Suresh", 2), ("Lakshmi", 1), ("Vivek", 2), ("Manish", 2), ("Gaurav", 2),
)
INDIAN_SURNAMES = (
    ("Sharma", 6), ("Kumar", 8), ("Singh", 7), ("Gupta", 5), ("Patel", 5), ("Reddy", 3), ("Rao", 3),
    ("Iyer", 2), ("Nair", 2), ("Jain", 3), ("Agarwal", 3), ("Mehta", 2), ("Verma", 3), ("Mishra", 3),
    ("Chatterjee", 2), ("Banerjee", 2), ("Das", 3), ("Joshi", 2), ("Krishnan", 2), ("Srinivasan", 2),
    ("Bhat", 1), ("Menon", 1), ("Pillai", 1), ("Shah", 2), ("Chopra", 1),
)
# (given names, surnames) with diacritics; the ASCII folding is a common variant.
EUROPEAN = {
    "german": (
        ("Jürgen", "Björn", "Jörg", "Günter", "Sören", "Lukas", "Felix", "Maximilian", "Katharina", "Anna",
         "Jonas", "Tobias", "Matthias", "Stefan", "Andreas", "Jörn", "Jan", "Jürgen", "Uwe", "Dieter", "Sabine",
         "Ute", "Moritz", "Lena", "Leonie", "Florian", "Sebastian", "Christoph", "Bernd", "Malte", "Henrik",
         "Niklas", "Timo", "Kathrin", "Dörte", "Käthe", "Torsten", "Volker", "Wolfgang", "Ralf", "Frank"),
        ("Müller", "Schäfer", "Schröder", "Köhler", "Böhm", "Krüger", "Weiß", "Groß", "Becker", "Wagner",
         "Hoffmann", "Fischer", "Weber", "Meyer", "Schulz", "Zimmermann", "Braun", "Hartmann", "Lange", "Schmid"),
    ),
    "french": (
        ("François", "Hélène", "Jérôme", "Stéphane", "Frédéric", "Céline", "Amélie", "Benoît", "Léa", "Théo",
         "Nicolas", "Pierre", "Julien", "Mathieu", "Camille", "Sébastien", "Émilie", "Gaëlle", "Loïc", "Anaïs",
         "Clément", "Adrien", "Antoine", "Guillaume", "Maxime", "Romain", "Élodie", "Aurélien", "Cédric",
         "Thibault", "Noémie", "Bérénice", "Rémi", "Yannick", "Margaux"),
        ("Lefèvre", "Dubois", "Moreau", "Lefebvre", "Girard", "Rousseau", "Mercier", "Fontaine", "Chevalier",
         "Lambert", "Faure", "Gauthier", "Perrin", "Bonnet", "Dupré", "Hébert", "Bérenger"),
    ),
    "iberian": (
        ("José", "María", "Álvaro", "Jesús", "Raúl", "Sebastián", "Andrés", "Iñaki", "João", "Gonçalo",
         "Inês", "Lucía", "Sofía", "Carlos", "Pablo", "Diego", "Javier", "Ramón", "Joaquín", "Martín",
         "Tomás", "Óscar", "Víctor", "Ángel", "Rubén", "Adrián", "Marta", "Elena", "Beatriz", "Nuria", "Rocío",
         "Guilherme", "Tiago", "Rodrigo", "Mariana", "Leonor", "Luis", "Jorge", "Miguel", "Alejandro"),
        ("García", "Martínez", "Rodríguez", "López", "Hernández", "González", "Pérez", "Sánchez", "Gómez",
         "Díaz", "Muñoz", "Jiménez", "Núñez", "Gonçalves", "Araújo", "Simões", "Fernández", "Ruiz", "Ortega"),
    ),
    "nordic": (
        ("Søren", "Åsa", "Bjørn", "Jørgen", "Märta", "Lars", "Erik", "Ingrid", "Magnus", "Sigrid", "Anders",
         "Mikael", "Henrik", "Kristian", "Håkan", "Göran", "Björn", "Fredrik", "Linnéa", "Ebba", "Oskar",
         "Nils", "Per", "Ola", "Karin", "Sofie", "Mads", "Rasmus", "Mette", "Tove"),
        ("Østergaard", "Ångström", "Jørgensen", "Sørensen", "Lindqvist", "Nyström", "Håkansson", "Andersson",
         "Johansson", "Karlsson", "Nielsen", "Hansen"),
    ),
    "slavic": (
        ("Łukasz", "Paweł", "Wojciech", "Michał", "Małgorzata", "Agnieszka", "Krzysztof", "Tomasz", "Jiří",
         "Tomáš", "Petr", "Lucie", "Jakub", "Piotr", "Marcin", "Katarzyna", "Joanna", "Bartłomiej", "Grzegorz",
         "Przemysław", "Radosław", "Zuzana", "Ondřej", "Jan", "Martin", "Vojtěch", "Lukáš", "Kateřina", "Tereza",
         "Marek", "Adam", "Mateusz"),
        ("Wójcik", "Kowalski", "Nowak", "Wiśniewski", "Dąbrowski", "Lewandowski", "Zieliński", "Szymański",
         "Dvořák", "Novák", "Černý", "Procházka", "Kučera"),
    ),
    "turkish": (
        ("Çağlar", "Şükrü", "Gökhan", "Ömer", "Ayşe", "Mehmet", "Emre", "Burak", "Elif", "Oğuz", "Mustafa",
         "Ahmet", "Hüseyin", "İbrahim", "Zeynep", "Merve", "Selin", "Barış", "Cem", "Deniz", "Kaan", "Onur",
         "Serkan", "Tolga", "Uğur", "Volkan", "Yasin", "Gizem", "Büşra", "Furkan"),
        ("Öztürk", "Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Yıldız", "Aydın", "Özdemir", "Arslan",
         "Doğan", "Kılıç"),
    ),
    "italian": (
        ("Giuseppe", "Marco", "Luca", "Francesca", "Giulia", "Alessandro", "Matteo", "Lorenzo", "Niccolò",
         "Chiara", "Andrea", "Davide", "Federico", "Simone", "Stefano", "Paolo", "Riccardo", "Fabio", "Elisa",
         "Martina", "Sara", "Valentina", "Gabriele", "Tommaso", "Filippo", "Pietro", "Emanuele", "Salvatore",
         "Antonio", "Silvia"),
        ("Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci", "Marino", "Greco",
         "Bruno", "Gallo", "Conti", "De Luca", "Costa"),
    ),
}
# Transliteration families: any member may be used for the same person.
RUSSIAN_GIVEN_MORE = ("Artem", "Boris", "Denis", "Egor", "Grigory", "Igor", "Kirill", "Konstantin", "Leonid",
                      "Maxim", "Nikita", "Oleg", "Pavel", "Roman", "Stanislav", "Timur", "Vadim", "Valery",
                      "Viktor", "Vladimir", "Yaroslav", "Daria", "Ekaterina", "Irina", "Ksenia", "Marina",
                      "Polina", "Svetlana", "Tatiana", "Yulia")
RUSSIAN_GIVEN = (
    ("Alexey", "Aleksei", "Alexei"), ("Dmitry", "Dmitrii", "Dmitri"), ("Sergey", "Sergei"),
    ("Andrey", "Andrei"), ("Ivan",), ("Mikhail",), ("Nikolay", "Nikolai"), ("Elena", "Yelena"), ("Olga",),
    ("Natalia", "Natalya"), ("Yury", "Yuri", "Iurii"), ("Evgeny", "Evgenii", "Yevgeny"), ("Anastasia",),
)
RUSSIAN_SURNAMES = ("Ivanov", "Smirnov", "Kuznetsov", "Popov", "Sokolov", "Lebedev", "Kozlov", "Novikov",
                    "Morozov", "Petrov", "Volkov", "Solovyov", "Vasiliev", "Zaitsev", "Pavlov", "Fedorov")
PERSIAN_GIVEN_MORE = ("Arash", "Babak", "Behnam", "Ehsan", "Farzad", "Hadi", "Hamed", "Iman", "Kaveh", "Masoud",
                      "Milad", "Mojtaba", "Nima", "Omid", "Payam", "Pouya", "Ramin", "Saman", "Siavash", "Soheil",
                      "Elham", "Leila", "Mahsa", "Narges", "Parisa", "Shirin", "Zahra", "Niloufar")
PERSIAN_GIVEN = (
    ("Mohammad", "Mohammed", "Muhammad"), ("Ali",), ("Reza",), ("Hossein", "Hosein"), ("Mahdi", "Mehdi"),
    ("Amir",), ("Sara", "Sarah"), ("Fatemeh", "Fatima"), ("Hamid",), ("Majid",), ("Maryam",),
)
PERSIAN_SURNAMES = ("Hosseini", "Ahmadi", "Rezaei", "Mohammadi", "Karimi", "Moradi", "Jafari", "Rahimi",
                    "Hashemi", "Ghasemi", "Sadeghi", "Tehrani")

# ---------------------------------------------------------------------------------------------
# Larger pools. The lists above are the common names (they carry most of the weight, which is
# what makes homonyms like "Wei Zhang" or "Michael Smith" frequent); surnames composed from real
# morphemes add the long tail every culture has, so rarer names stay (mostly) unique.
# ---------------------------------------------------------------------------------------------
def _compose(prefixes: str, suffixes: str) -> tuple[str, ...]:
    return tuple(p + s for p in prefixes.split() for s in suffixes.split())


WESTERN_GIVEN_MORE = tuple((n, 1) for n in """Aaron Adrian Alan Albert Alex Alice Allison Amanda Amy Andrea Angela
    Anthony Arthur Austin Blake Brandon Brett Bruce Caleb Cameron Carl Caroline Charles Charlotte Chloe Claire
    Colin Connor Craig Dana Derek Dylan Edward Eli Ella Ethan Evan Frank Gabriel Grace Graham Gregory Ian Isaac
    Jack Jacob Jason Jeffrey Jeremy Jesse Joel Jordan Joshua Julia Julian Karen Keith Kyle Lauren Leah Liam
    Lily Logan Lucas Luke Madison Marcus Martin Megan Melissa Nathan Neil Noah Oliver Owen Patrick Philip
    Quinn Robin Roger Rose Russell Sean Seth Simon Sophie Spencer Stephanie Stuart Timothy Todd Trevor Victor
    Victoria Vincent Walter Wesley Zachary Zoe Abigail Audrey Brian Carter Dominic Eleanor Felix Harvey Ivy
    Jonah Kendall Malcolm Natalie Paige Reid Sabrina Tristan Warren""".split())
WESTERN_SURNAMES_COMPOSED = _compose(
    "Ash Black Brad Brook Cal Cart Chester Clay Cole Craw Dal Dun East Ells Fair Fern Fox Gar Glad Gold Green "
    "Hal Ham Hart Hay Hol Hux King Lang Lock Mar Mid Mor New Nor Pem Red Ros Rut Sand Shel Stan Stock Sut "
    "Thorn Wal War Wel West Whit Wick Win Wood Wy",
    "ford well ton by ley field wood man son ham worth ridge stone more dale wick combe shaw brook land bury "
    "croft ington hurst low cott den")
INDIAN_GIVEN_MORE = tuple((n, 1) for n in """Ajay Akash Alok Anand Anil Anjali Arun Ashok Bharat Deepika Dinesh
    Divya Ganesh Gopal Harish Hemant Jayant Kavya Kiran Krishna Lalit Madhav Mahesh Meera Mohan Mukesh Naveen
    Nisha Pankaj Prakash Pranav Rakesh Ravi Rohit Sachin Sameer Sanjana Shankar Shweta Sunil Tarun Uday Vijay
    Vinay Yash Aparna Chetan Gautam Ishaan Kunal Lokesh Nandini Omkar Pallavi Ritu Sneha""".split())
INDIAN_SURNAMES_COMPOSED = _compose(
    "Krishna Venkata Subra Rama Bala Siva Raghu Nara Chandra Vija Sri Gopala Hari Ananth Padma Sunda Jaya Vasu "
    "Mahadeva Shanmuga Guru Deva Kali Lakshmi Ravi Surya",
    "murthy raman manian swamy nathan krishnan sekhar kumar chari prasad varma dasan pathi rajan")
JAPANESE_SURNAMES_COMPOSED = _compose(
    "Yama Naka Taka Ishi Kawa Mori Matsu Hashi Fuji Hira Koba Miya Sugi Kuro Shira Oka Kita Nishi Higashi Ao",
    "moto mura da ta kawa shita guchi zaki hara no uchi saki oka yama bayashi")
JAPANESE_GIVEN_MORE = tuple((n, 1) for n in """Akihiro Atsushi Daiki Eiji Hajime Haruto Hideki Hiroki Hiroto Ichiro
    Jun Kaito Katsuya Keisuke Ken Koji Kota Makoto Masahiro Minoru Nobuyuki Osamu Ren Riku Ryota Sho Shun
    Sota Tadashi Takumi Taro Tatsuya Tomohiro Toshiki Tsubasa Yamato Yoshiki Yuichi Yuma Yusaku Akane Emi
    Hana Kana Kaori Megumi Misaki Nana Saki Yui""".split())
KOREAN_SYLLABLES_MORE = tuple((n, 1) for n in """byung chul dae gyu hee hwan il jeong jong kwang kyu myung nam sook
    suk un yong yun ha bin seon ah in gun""".split())
CHINESE_SYLLABLES_MORE = tuple((n, 1) for n in """bao biao cai can cang ce cen chi chong chuan chun cong cui dao de
    deng di dian du duo fa fen fu gao gen gong guo hen hou jiao jie jiu ju juan kai kuan lang lei liu lu luo
    man mao miao mu nai neng pan ping qiu quan ren rui shang shen shi shuai shuang sui tai tang wang wei xi
    xian xiu yuan zan zeng zhan zhang zheng zhou zhuang zong zun""".split())
# second halves shared by several cultures' composed surnames would look wrong: each culture has its own
EUROPEAN_SURNAMES_COMPOSED = {
    "german": _compose("Schön Grün Stein Wald Berg Rosen Eichen Lind Brück Hölz Kirch Mühl Fried Sonnen Ober "
                       "Neu Hoch Kloster Weiß Großk Alt Bären Dorn Falken Hagen Kessel Linden Mohn Nuss Reichen "
                       "Sauer Tann Wies Zell", "berg mann bach feld hauser müller thal hof inger meier dorf "
                       "brunner huber lehner reiter"),
    "french": _compose("Du Le Beau Bon Mont Belle Val Bois Font Roche Gré Mé Chà Dé Ber Cha Gau Mar Tho Ver "
                       "Vau Lan Mor Pel", "pont champ fort lieu court ville ain ier eau rand mont val nier chet "
                       "vin net lard rault"),
    "iberian": _compose("Fernánd Rodríg Gonzál Hernánd Martín Sánch Góm Vázqu Domíngu Álvar Ramír Suár Benít "
                        "Ibáñ Muñ Peláe", "ez es") + _compose(
                        "Vill Castell Monte Valle Torre Campo Fuen Oliv Barr Pedr", "alba anos negro verde ejón "
                        "tes ares eira oso osa"),
    "nordic": _compose("Lind Berg Ström Sjö Ek Ny Hag Dahl Lund Holm Sand Fors Sund Ås Björk Öst Al Eng Gran "
                       "Hed Kvarn Löv Mal Rosen Skog Väst", "qvist ström berg gren lund dahl holm man blad sson "
                       "gård by vik näs"),
    "slavic": _compose("Kowal Wiśniew Dąbrow Lewandow Zieliń Szymań Kozłow Jankow Grabow Wieczor Jabłoń Majew "
                       "Olszew Gór", "ski czyk ewicz") + _compose("Dvoř Svob Proch Kuč Marš Havl Hor Blaž Vlč Šťast",
                                                                  "ák ek íček ný"),
    "turkish": _compose("Öz Yıl Kay Dem Şah Çel Yıld Ayd Ars Doğ Kıl Akt Kor Tun Erd Bal Kar Ak Gül Sar Tek "
                        "Uy Ün Koç Ata Bay", "türk maz soy kaya demir han oğlu can er taş kan gün el"),
    "italian": _compose("Ross Bian Ferr Espos Rom Colomb Ric Marin Gre Brun Gall Cont Cost Fontan Mancin Lombard "
                        "Moret Barb Sant Vitt Bell Cap Fior Gatt Lup Mont Pell Sorr Test Zan",
                        "i o ini etti elli ucci one ari ano ato ardi otti"),
}
RUSSIAN_SURNAMES_COMPOSED = _compose(
    "Petr Ivan Smirn Kuznets Sokol Lebed Kozl Novik Moroz Volk Zaits Pavl Fedor Orl Medved Bel Taras Gus "
    "Vinograd Bogdan Kisel Makar Nikit Zakhar Frol Roman Semen Egor Grigor", "ov ev in sky")
PERSIAN_SURNAMES_COMPOSED = _compose(
    "Ahmad Mohammad Hassan Rahim Karim Jafar Ghasem Sadegh Rez Akbar Nasser Bagher Kazem Mahmoud Yousef Amir "
    "Abbas Asgar Bahram Dariush Esmail Farhad Habib Javad Kamal Majid Morteza Naser Parviz Saeed Shahab Vahid",
    "i zadeh pour nejad far ian khani abadi")


CULTURES = (
    ("chinese", 46), ("western", 14), ("indian", 8), ("korean", 5), ("japanese", 3), ("vietnamese", 2),
    ("german", 4), ("french", 3), ("iberian", 4), ("nordic", 1.5), ("slavic", 2), ("turkish", 1.5),
    ("italian", 2.5), ("russian", 2), ("persian", 2),
)
CULTURE_NAMES = tuple(c for c, _ in CULTURES)
CULTURE_WEIGHTS = tuple(w for _, w in CULTURES)
EAST_ASIAN = frozenset({"chinese", "korean", "japanese", "vietnamese"})


def _cum(weighted):
    """An expanded table: each item repeated by its (integer) weight, so rng.choice is a weighted pick."""
    return tuple(item for item in weighted for _ in range(int(item[-1])))


_CN_SUR_CUM = _cum(CHINESE_SURNAMES)
_CN_SYL_CUM = _cum(tuple((n, 4 * w) for n, w in CHINESE_SYLLABLES) + CHINESE_SYLLABLES_MORE)
_KR_SUR_CUM = _cum(KOREAN_SURNAMES)
_KR_SYL_CUM = _cum(tuple((n, 3 * w) for n, w in KOREAN_SYLLABLES) + KOREAN_SYLLABLES_MORE)
_JP_SUR_CUM = _cum(tuple((n, w) for n, w in JAPANESE_SURNAMES) + tuple((n, 1) for n in JAPANESE_SURNAMES_COMPOSED))
_JP_GIV_CUM = _cum(tuple((n, 2 * w) for n, w in JAPANESE_GIVEN) + JAPANESE_GIVEN_MORE)
_VN_SUR_CUM = _cum(VIETNAMESE_SURNAMES)
_VN_GIV_CUM = _cum(VIETNAMESE_GIVEN)
_WE_GIV_CUM = _cum(tuple((n, 2 * w) for n, w in WESTERN_GIVEN) + WESTERN_GIVEN_MORE)
_WE_SUR_CUM = _cum(tuple((n, 3 * w) for n, w in WESTERN_SURNAMES) + tuple((n, 1) for n in WESTERN_SURNAMES_COMPOSED))
_IN_GIV_CUM = _cum(tuple((n, 2 * w) for n, w in INDIAN_GIVEN) + INDIAN_GIVEN_MORE)
_IN_SUR_CUM = _cum(tuple((n, 2 * w) for n, w in INDIAN_SURNAMES) + tuple((n, 1) for n in INDIAN_SURNAMES_COMPOSED))
_EU_SURNAMES = {c: families * 2 + EUROPEAN_SURNAMES_COMPOSED[c] for c, (_givens, families) in EUROPEAN.items()}
_RU_SURNAMES = RUSSIAN_SURNAMES + RUSSIAN_SURNAMES_COMPOSED
_FA_SURNAMES = PERSIAN_SURNAMES + PERSIAN_SURNAMES_COMPOSED


def _pick(rng: random.Random, table):
    return table[int(rng.random() * len(table))]


@dataclass(frozen=True, slots=True)
class PersonName:
    """A person's name: canonical form, the form their own papers usually carry, other variants."""

    culture: str
    canonical: str          # how Scholar Feed shows the profile
    habitual: str           # the form on the person's arXiv papers (BZPEER imports it)
    variants: tuple[str, ...]  # other forms pages use for the same person (never the canonical)
    variant_kinds: tuple[str, ...]  # what kind each variant is ('initials', 'family_first', ...)
    family: str             # surname as in the canonical form (typos act on it)


_FOLD_SPECIAL = str.maketrans({"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "ß": "ss", "đ": "d", "Đ": "D", "ı": "i", "æ": "ae"})


def fold_ascii(text: str) -> str:
    """Drop diacritics: José -> Jose, Łukasz -> Lukasz, Nguyễn -> Nguyen, Ørsted -> Orsted."""
    if text.isascii():
        return text
    text = text.translate(_FOLD_SPECIAL)
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def _german_translit(text: str) -> str:
    for a, b in (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("Ä", "Ae"), ("Ö", "Oe"), ("Ü", "Ue"), ("ß", "ss")):
        text = text.replace(a, b)
    return text


def _initial(given: str) -> str:
    """``Jun-Hui`` -> ``J.-H.``; ``Junhui`` -> ``J.``; ``Van Anh`` -> ``V. A.``."""
    parts = []
    for word in given.split(" "):
        parts.append("-".join(p[0] + "." for p in word.split("-") if p))
    return " ".join(parts)


def _join_syllables(syllables: list[str], style: str) -> str:
    if len(syllables) == 1:
        return syllables[0].capitalize()
    a, b = syllables[0].capitalize(), syllables[1]
    if style == "joined":
        return a + b
    if style == "hyphen_cap":
        return a + "-" + b.capitalize()
    if style == "hyphen_low":
        return a + "-" + b
    if style == "camel":
        return a + b.capitalize()
    return a + " " + b.capitalize()   # "spaced"


class _Variants:
    """A name's variant forms, in the order drawn (a form is kept once)."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def add(self, kind: str, form: str) -> None:
        if form and all(form != v for _, v in self.pairs):
            self.pairs.append((kind, form))


def _chinese_or_korean(rng: random.Random, culture: str, v: _Variants) -> tuple[str, str]:
    """Chinese or Korean: syllables joined one of several ways, family name last."""
    if culture == "chinese":
        family = _pick(rng, _CN_SUR_CUM)[0]
        n_syl = 1 if rng.random() < 0.22 else 2
        syllables = [_pick(rng, _CN_SYL_CUM)[0] for _ in range(n_syl)]
        style = rng.choices(("joined", "hyphen_cap", "hyphen_low", "camel"), weights=(84, 8, 4, 4))[0]
    else:
        family = _pick(rng, _KR_SUR_CUM)[0]
        syllables = [_pick(rng, _KR_SYL_CUM)[0] for _ in range(2)]
        style = rng.choices(("joined", "hyphen_cap", "hyphen_low", "spaced"), weights=(35, 35, 25, 5))[0]
    given = _join_syllables(syllables, style)
    canonical = f"{given} {family}"
    if len(syllables) == 2:
        for other in ("joined", "hyphen_cap", "hyphen_low", "camel"):
            if other != style:
                v.add("given_joining", f"{_join_syllables(syllables, other)} {family}")
                if len(v.pairs) >= 2:
                    break
    v.add("initials", f"{_initial(_join_syllables(syllables, 'hyphen_cap') if rng.random() < 0.4 else given)} {family}")
    v.add("family_first", f"{family} {given}")
    if rng.random() < 0.15:
        v.add("family_upper", f"{family.upper()} {given}")
    return canonical, family


def _japanese(rng: random.Random, v: _Variants) -> tuple[str, str]:
    """Japanese: given name first, sometimes written with macrons."""
    family = _pick(rng, _JP_SUR_CUM)[0]
    given = _pick(rng, _JP_GIV_CUM)[0]
    canonical = f"{given} {family}"
    macron = f"{JAPANESE_MACRONS.get(given, given)} {JAPANESE_MACRONS.get(family, family)}"
    if macron != canonical:
        if rng.random() < 0.2:   # some people write their own name with macrons
            canonical, macron = macron, canonical
        v.add("diacritics", macron)
    v.add("initials", f"{given[0]}. {canonical.split(' ')[-1]}")
    v.add("family_first", " ".join(reversed(canonical.split(" "))))
    family = canonical.split(" ")[-1]
    return canonical, family


def _vietnamese(rng: random.Random, v: _Variants) -> tuple[str, str]:
    """Vietnamese: family, middle and given names, with or without diacritics."""
    fam_ascii, fam_dia, _ = _pick(rng, _VN_SUR_CUM)
    if rng.random() < 0.3:
        giv_ascii, giv_dia, _ = _pick(rng, _VN_GIV_CUM)
    else:   # middle + given name ("Van Anh", "Duc Huy")
        (m_a, m_d), (l_a, l_d) = rng.choice(VIETNAMESE_GIVEN_PARTS), rng.choice(VIETNAMESE_GIVEN_LAST)
        giv_ascii, giv_dia = f"{m_a} {l_a}", f"{m_d} {l_d}"
    with_dia = rng.random() < 0.15
    given, family = (giv_dia, fam_dia) if with_dia else (giv_ascii, fam_ascii)
    canonical = f"{given} {family}"
    v.add("diacritics", f"{giv_ascii} {fam_ascii}" if with_dia else f"{giv_dia} {fam_dia}")
    v.add("family_first", f"{family} {given}")
    v.add("initials", f"{_initial(given)} {family}")
    return canonical, family


def _western_or_indian(rng: random.Random, culture: str, v: _Variants) -> tuple[str, str]:
    """Western or Indian: a given name, sometimes a middle initial, a family name."""
    if culture == "western":
        given = _pick(rng, _WE_GIV_CUM)[0]
        family = _pick(rng, _WE_SUR_CUM)[0]
        has_middle = rng.random() < 0.3
    else:
        given = _pick(rng, _IN_GIV_CUM)[0]
        family = _pick(rng, _IN_SUR_CUM)[0]
        has_middle = rng.random() < 0.15
    middle = rng.choice("ABCDEFGHJKLMNPRSTW") + "." if has_middle else ""
    canonical = f"{given} {middle} {family}" if middle else f"{given} {family}"
    v.add("initials", f"{given[0]}. {family}")
    if middle:
        v.add("initials", f"{given[0]}. {middle} {family}")
        v.add("middle", f"{given} {family}")
    else:
        v.add("middle", f"{given} {rng.choice('ABCDEFGHJKLMNPRSTW')}. {family}")
    return canonical, family


def _european(rng: random.Random, culture: str, v: _Variants) -> tuple[str, str]:
    """European (by country): accents folded, German transliteration, Iberian double surnames."""
    givens, families = EUROPEAN[culture][0], _EU_SURNAMES[culture]
    given, family = rng.choice(givens), rng.choice(families)
    if culture == "iberian" and rng.random() < 0.25:
        second = rng.choice(families)
        if second != family:
            family_hyph = f"{family}-{second}"
            v.add("double_surname", f"{given} {family} {second}")
            v.add("double_surname", f"{given} {family}")
            family = family_hyph
    canonical = f"{given} {family}"
    folded = fold_ascii(canonical)
    if culture == "german":
        v.add("transliteration", _german_translit(canonical))
    v.add("ascii_fold", folded)
    v.add("initials", f"{given[0]}. {family}")
    return canonical, family


def _russian(rng: random.Random, v: _Variants) -> tuple[str, str]:
    """Russian: transliteration variants of the given name."""
    family_forms = rng.choice(RUSSIAN_GIVEN) if rng.random() < 0.5 else (rng.choice(RUSSIAN_GIVEN_MORE),)
    given, family = family_forms[0], rng.choice(_RU_SURNAMES)
    if len(family_forms) > 1 and rng.random() < 0.4:
        given = family_forms[1]
    canonical = f"{given} {family}"
    for alt in family_forms:
        if alt != given:
            v.add("transliteration", f"{alt} {family}")
    v.add("initials", f"{given[0]}. {family}")
    return canonical, family


def _persian(rng: random.Random, v: _Variants) -> tuple[str, str]:
    """Persian: transliteration variants of the given name."""
    forms = rng.choice(PERSIAN_GIVEN) if rng.random() < 0.5 else (rng.choice(PERSIAN_GIVEN_MORE),)
    given, family = rng.choice(forms), rng.choice(_FA_SURNAMES)
    canonical = f"{given} {family}"
    for alt in forms:
        if alt != given:
            v.add("transliteration", f"{alt} {family}")
    v.add("initials", f"{given[0]}. {family}")
    return canonical, family


def make_name(rng: random.Random, culture: str) -> PersonName:
    """Draw one person's name in the given culture with its variants."""
    forms = _Variants()
    if culture in ("chinese", "korean"):
        canonical, family = _chinese_or_korean(rng, culture, forms)
    elif culture == "japanese":
        canonical, family = _japanese(rng, forms)
    elif culture == "vietnamese":
        canonical, family = _vietnamese(rng, forms)
    elif culture in ("western", "indian"):
        canonical, family = _western_or_indian(rng, culture, forms)
    elif culture in EUROPEAN:
        canonical, family = _european(rng, culture, forms)
    elif culture == "russian":
        canonical, family = _russian(rng, forms)
    else:  # persian
        canonical, family = _persian(rng, forms)
    variants = forms.pairs

    pairs = [(k, v) for k, v in variants if v != canonical]
    # Most people sign their papers with the canonical name; some habitually use another form
    # (initials for western authors, a different joining for Chinese given names).
    habitual = canonical
    if pairs and rng.random() < 0.1:
        habitual = rng.choice(pairs)[1]
    return PersonName(
        culture=culture,
        canonical=canonical,
        habitual=habitual,
        variants=tuple(v for _, v in pairs),
        variant_kinds=tuple(k for k, _ in pairs),
        family=family,
    )


# ---------------------------------------------------------------------------------------------
# Typos: one-edit slips in the surname of a byline ("Cheng" -> "Chen", sample 003's CALM byline).
# ---------------------------------------------------------------------------------------------
def surname_typo(name: str, family: str, rng: random.Random) -> str:
    """The name with a plausible one-edit slip in the surname; unchanged if the surname is absent."""
    idx = name.rfind(family)
    if idx < 0 or len(family) < 2:
        return name
    fam = family
    options = []
    if fam.endswith("ng") and len(fam) > 3:
        options.append(fam[:-1])                 # Cheng -> Chen, Zhang -> Zhan
    if fam.endswith("n") and not fam.endswith("ng") and len(fam) > 2:
        options.append(fam + "g")                # Chen -> Cheng, Lin -> Ling
    if len(fam) > 3:
        i = rng.randrange(1, len(fam) - 2)
        options.append(fam[:i] + fam[i + 1] + fam[i] + fam[i + 2:])   # swap two inner letters
        j = rng.randrange(1, len(fam) - 1)
        options.append(fam[:j] + fam[j + 1:])                           # drop a letter
    k = rng.randrange(1, len(fam))
    options.append(fam[:k] + fam[k - 1] + fam[k:])                      # double a letter
    typo = rng.choice([o for o in options if o != fam] or [fam + fam[-1]])
    return name[:idx] + typo + name[idx + len(fam):]
